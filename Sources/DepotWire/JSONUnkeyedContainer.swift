/// An unkeyed container of ``JSONTreeEncoder``, filling one ``JSONArray``.
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
