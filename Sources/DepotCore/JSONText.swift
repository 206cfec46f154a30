/// Writes JSON text by hand where byte-exact, stable output matters (product lists, manifests, errors).
public enum JSONText {
    /// A JSON string literal with the minimal escapes of RFC 8259 §7 (`/` is not escaped).
    public static func string(_ value: String) -> String {
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
        return out
    }

    /// `null` or a string literal.
    public static func optionalString(_ value: String?) -> String {
        value.map(string) ?? "null"
    }
}
