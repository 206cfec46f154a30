/// JSON numbers: integers as decimal text; floating point only when finite.
enum JSONNumber {
    static func text<T: BinaryFloatingPoint & LosslessStringConvertible>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: codingPath, debugDescription: "JSON has no \(value)"))
        }
        return .number(value.description)
    }
}
