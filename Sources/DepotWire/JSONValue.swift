/// A JSON document being built by ``WireJSON``'s encoder: objects keep their members in the order they were
/// first encoded (a `CodingKeys` order, or the order of `encode` calls), never sorted or hashed.
enum JSONValue {
    case null
    case bool(Bool)
    /// A number already written as JSON text.
    case number(String)
    case string(String)
    case array(JSONArray)
    case object(JSONObject)

    /// Writes the value in Depot's layout: `{"key": value, "other": [1, 2]}`, on one line except where a
    /// ``WireLayoutKey`` asks for line breaks. `depth` is the nesting level of the value's contents (1 for the
    /// members of a top-level object).
    func write(to out: inout [UInt8], depth: Int = 1, elementsStartLines: Bool = false) {
        switch self {
        case .null: out.append(contentsOf: Array("null".utf8))
        case .bool(let value): out.append(contentsOf: Array((value ? "true" : "false").utf8))
        case .number(let text): out.append(contentsOf: Array(text.utf8))
        case .string(let text): JSONText.append(text, to: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if elementsStartLines {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    Self.breakLine(&out, depth: depth)
                } else if index > 0 {
                    out.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")])
                }
                element.write(to: &out, depth: depth + 1)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.enumerated() {
                if object.lineStarts.contains(key) {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    Self.breakLine(&out, depth: depth)
                } else if index > 0 {
                    out.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")])
                }
                JSONText.append(key, to: &out)
                out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
                (object.members[key] ?? .null).write(to: &out, depth: depth + 1, elementsStartLines: object.elementLineStarts.contains(key))
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func breakLine(_ out: inout [UInt8], depth: Int) {
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth))
    }
}
