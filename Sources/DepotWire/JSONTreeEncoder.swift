/// The `Encoder` behind ``WireJSON``: turns any `Encodable` into a ``JSONValue`` tree whose objects keep the
/// order in which their keys were encoded. Values are handed to `store` as soon as they exist (containers are
/// classes, filled in place afterwards), which is what lets `superEncoder()` and nested containers work.
final class JSONTreeEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private let store: (JSONValue) -> Void
    private var value: JSONValue?

    init(codingPath: [any CodingKey], store: @escaping (JSONValue) -> Void) {
        self.codingPath = codingPath
        self.store = store
    }

    /// Encodes `value` on its own and returns what it produced (`{}` for a value that encoded nothing, as
    /// Foundation's encoder does).
    static func tree(of value: some Encodable, codingPath: [any CodingKey]) throws -> JSONValue {
        if let direct = primitive(value) { return direct }
        var result: JSONValue?
        let encoder = JSONTreeEncoder(codingPath: codingPath) { result = $0 }
        try value.encode(to: encoder)
        return result ?? .object(JSONObject())
    }

    /// Strings and integers without a trip through a nested encoder (arrays of them are common).
    private static func primitive(_ value: some Encodable) -> JSONValue? {
        switch value {
        case let text as String: .string(text)
        case let number as Int: .number(String(number))
        case let number as Int64: .number(String(number))
        case let flag as Bool: .bool(flag)
        default: nil
        }
    }

    /// Sets the value this encoder produced (a single-value container writes through it).
    func put(_ new: JSONValue) {
        value = new
        store(new)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: JSONObject
        if case .object(let existing) = value {
            object = existing
        } else {
            object = JSONObject()
            put(.object(object))
        }
        return KeyedEncodingContainer(JSONKeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: JSONArray
        if case .array(let existing) = value {
            array = existing
        } else {
            array = JSONArray()
            put(.array(array))
        }
        return JSONUnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        JSONSingleValueContainer(encoder: self)
    }
}
