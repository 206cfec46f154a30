/// Reads the old-style (OpenStep) property lists of iOS 6 transaction receipts:
/// `{ "key" = "value"; ... }` whose values are all strings.
///
/// Only that shape is accepted — a dictionary of string keys to string values, keys quoted or bare,
/// with the escapes `\\`, `\"`, `\n`, `\r`, `\t` — so the reader never recurses and its cost is linear
/// in the input. Anything else (nested dictionaries, arrays, data, comments, repeated keys, text
/// after the closing brace) is refused.
public enum OldStylePropertyList {
    /// The dictionary in `bytes`, or nil when they are not such a property list.
    public static func stringDictionary(_ bytes: some Collection<UInt8>) -> [String: String]? {
        var reader = Reader(bytes: Array(bytes))
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var dictionary: [String: String] = [:]
        while true {
            reader.skipWhitespace()
            if reader.take(UInt8(ascii: "}")) { break }
            guard let key = reader.string() else { return nil }
            reader.skipWhitespace()
            guard reader.take(UInt8(ascii: "=")) else { return nil }
            reader.skipWhitespace()
            guard let value = reader.string() else { return nil }
            reader.skipWhitespace()
            guard reader.take(UInt8(ascii: ";")), dictionary.updateValue(value, forKey: key) == nil else { return nil }
        }
        reader.skipWhitespace()
        return reader.atEnd ? dictionary : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A quoted string with its escapes resolved, or a bare one (letters, digits, `_$+/:.-`).
        mutating func string() -> String? {
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") { return quoted() }
            let start = index
            while index < bytes.count, Self.isBare(bytes[index]) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        private mutating func quoted() -> String? {
            index += 1
            var text: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\\"), UInt8(ascii: "\""): text.append(escaped)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    default: return nil
                    }
                default:
                    text.append(byte)
                }
            }
            return nil  // no closing quote
        }

        private static func isBare(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"),
                 UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}
