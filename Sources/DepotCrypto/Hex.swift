/// Lowercase hexadecimal encoding of bytes (digests in manifests, fingerprints in logs).
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lowercase hex, two characters per byte.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let count = bytes.count * 2
        if count == 0 { return "" }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var index = 0
            for byte in bytes {
                buffer[index] = digits[Int(byte >> 4)]
                buffer[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return count
        }
    }

    /// Decodes hex (either case, no separators); nil for odd length or a non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var result = [UInt8]()
        result.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension Array where Element == UInt8 {
    /// The bytes as lowercase hex (see ``Hex/encode(_:)``).
    public var hexString: String { Hex.encode(self) }
}
