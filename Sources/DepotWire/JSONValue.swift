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

/// An array under construction; a class so that a nested container can keep filling it after it was placed.
final class JSONArray {
    var elements: [JSONValue] = []
}

/// An object under construction: members in first-encoded order; encoding a key again replaces its value in place.
final class JSONObject {
    private(set) var keys: [String] = []
    private(set) var members: [String: JSONValue] = [:]
    /// Members that start a new line, and members whose array elements do (``WireLayoutKey``).
    var lineStarts: Set<String> = []
    var elementLineStarts: Set<String> = []

    func set(_ key: String, _ value: JSONValue) {
        if members.updateValue(value, forKey: key) == nil { keys.append(key) }
    }

    /// Stores `value` under `key`, with the key's layout.
    func set(_ key: some CodingKey, _ value: JSONValue) {
        let name = key.stringValue
        set(name, value)
        if let layout = key as? any WireLayoutKey {
            if layout.startsLine { lineStarts.insert(name) }
            if layout.elementsStartLines { elementLineStarts.insert(name) }
        }
    }

    /// The object already stored under `key`, or a new one put there.
    func object(at key: some CodingKey) -> JSONObject {
        if case .object(let existing) = members[key.stringValue] { return existing }
        let object = JSONObject()
        set(key, .object(object))
        return object
    }

    /// The array already stored under `key`, or a new one put there.
    func array(at key: some CodingKey) -> JSONArray {
        if case .array(let existing) = members[key.stringValue] { return existing }
        let array = JSONArray()
        set(key, .array(array))
        return array
    }
}
