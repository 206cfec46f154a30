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
