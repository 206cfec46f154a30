/// A keyed container of ``JSONTreeEncoder``, filling one ``JSONObject``.
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
