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

    fileprivate func put(_ new: JSONValue) {
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

/// JSON numbers: integers as decimal text; floating point only when finite.
enum JSONNumber {
    static func text<T: BinaryFloatingPoint & LosslessStringConvertible>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: codingPath, debugDescription: "JSON has no \(value)"))
        }
        return .number(value.description)
    }
}

/// A key of `superEncoder()`.
struct JSONSuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

/// An index key for coding paths inside arrays.
struct JSONIndexKey: CodingKey {
    let index: Int
    var stringValue: String { "\(index)" }
    var intValue: Int? { index }
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { index = intValue }
}

struct JSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { object.set(key, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { object.set(key, .bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { object.set(key, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        object.set(key, try JSONNumber.text(value, codingPath: codingPath + [key]))
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        object.set(key, try JSONNumber.text(value, codingPath: codingPath + [key]))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { object.set(key, .number(String(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { object.set(key, .number(String(value))) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.set(key, try JSONTreeEncoder.tree(of: value, codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(JSONKeyedContainer<NestedKey>(object: object.object(at: key), codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        JSONUnkeyedContainer(array: object.array(at: key), codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let object = self.object
        return JSONTreeEncoder(codingPath: codingPath + [JSONSuperKey()]) { object.set("super", $0) }
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let object = self.object
        return JSONTreeEncoder(codingPath: codingPath + [key]) { object.set(key, $0) }
    }
}

struct JSONUnkeyedContainer: UnkeyedEncodingContainer {
    let array: JSONArray
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    private var nextKey: JSONIndexKey { JSONIndexKey(array.elements.count) }

    mutating func encodeNil() throws { array.elements.append(.null) }
    mutating func encode(_ value: Bool) throws { array.elements.append(.bool(value)) }
    mutating func encode(_ value: String) throws { array.elements.append(.string(value)) }
    mutating func encode(_ value: Double) throws { array.elements.append(try JSONNumber.text(value, codingPath: codingPath + [nextKey])) }
    mutating func encode(_ value: Float) throws { array.elements.append(try JSONNumber.text(value, codingPath: codingPath + [nextKey])) }
    mutating func encode(_ value: Int) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: Int8) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: Int16) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: Int32) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: Int64) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: UInt) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: UInt8) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: UInt16) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: UInt32) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: UInt64) throws { array.elements.append(.number(String(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        array.elements.append(try JSONTreeEncoder.tree(of: value, codingPath: codingPath + [nextKey]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [nextKey]
        let object = JSONObject()
        array.elements.append(.object(object))
        return KeyedEncodingContainer(JSONKeyedContainer<NestedKey>(object: object, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [nextKey]
        let nested = JSONArray()
        array.elements.append(.array(nested))
        return JSONUnkeyedContainer(array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let array = self.array
        let index = array.elements.count
        array.elements.append(.null)
        return JSONTreeEncoder(codingPath: codingPath + [JSONIndexKey(index)]) { array.elements[index] = $0 }
    }
}

struct JSONSingleValueContainer: SingleValueEncodingContainer {
    let encoder: JSONTreeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.put(.null) }
    mutating func encode(_ value: Bool) throws { encoder.put(.bool(value)) }
    mutating func encode(_ value: String) throws { encoder.put(.string(value)) }
    mutating func encode(_ value: Double) throws { encoder.put(try JSONNumber.text(value, codingPath: codingPath)) }
    mutating func encode(_ value: Float) throws { encoder.put(try JSONNumber.text(value, codingPath: codingPath)) }
    mutating func encode(_ value: Int) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: Int8) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: Int16) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: Int32) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: Int64) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: UInt) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: UInt8) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: UInt16) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: UInt32) throws { encoder.put(.number(String(value))) }
    mutating func encode(_ value: UInt64) throws { encoder.put(.number(String(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.put(try JSONTreeEncoder.tree(of: value, codingPath: codingPath))
    }
}
