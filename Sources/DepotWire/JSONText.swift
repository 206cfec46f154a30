/// JSON string literals with the minimal escapes of RFC 8259 §7 (`/` is not escaped): what ``WireJSON`` writes,
/// and what the few hand-built hot paths (the product lists, the token payload) use to stay byte-identical to it.
public enum JSONText {
    /// A JSON string literal.
    public static func string(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `null` or a string literal.
    public static func optionalString(_ value: String?) -> String {
        value.map(string) ?? "null"
    }

    /// Appends `value` as a JSON string literal (quotes included) to `out`.
    public static func append(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default:
                // Bytes of multi-byte UTF-8 sequences are all ≥ 0x80: copied as they are.
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
