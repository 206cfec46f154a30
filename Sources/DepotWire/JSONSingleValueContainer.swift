/// The single-value container of ``JSONTreeEncoder``.
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
