/// An ordered list of header fields. Names compare case-insensitively (they are stored lower-cased);
/// repeated fields are all kept, in order — nothing is ever "last wins".
public struct HTTPFields: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Sendable, Equatable {
        /// Lower-cased field name, used for comparison.
        public var name: String
        /// The name as it was given (what is sent on the wire).
        public var displayName: String
        public var value: String
    }

    @usableFromInline var storage: [Field] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { append(name, value) }
    }

    public var count: Int { storage.count }

    /// Appends a field; the name is lower-cased.
    public mutating func append(_ name: String, _ value: String) {
        storage.append(Field(name: name.lowercased(), displayName: name, value: value))
    }

    /// Appends a field whose name is already lower-case.
    mutating func appendLowercased(_ name: String, _ value: String) {
        storage.append(Field(name: name, displayName: name, value: value))
    }

    /// Replaces every field of that name with one field.
    public mutating func set(_ name: String, _ value: String) {
        let lower = name.lowercased()
        storage.removeAll { $0.name == lower }
        storage.append(Field(name: lower, displayName: name, value: value))
    }

    public mutating func remove(_ name: String) {
        let lower = name.lowercased()
        storage.removeAll { $0.name == lower }
    }

    /// Every value of the field, one per occurrence, in order.
    public func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        var result: [String] = []
        for field in storage where field.name == lower { result.append(field.value) }
        return result
    }

    /// The first value of the field.
    public func first(_ name: String) -> String? {
        let lower = name.lowercased()
        for field in storage where field.name == lower { return field.value }
        return nil
    }

    /// How many times the field occurs.
    public func occurrences(_ name: String) -> Int {
        let lower = name.lowercased()
        var n = 0
        for field in storage where field.name == lower { n += 1 }
        return n
    }

    public func contains(_ name: String) -> Bool { first(name) != nil }

    /// Every comma-separated element of every occurrence of a list-valued field, trimmed, empty ones dropped
    /// (RFC 9110 §5.6.1).
    public func listElements(_ name: String) -> [Substring] {
        var result: [Substring] = []
        for value in values(name) {
            for element in value.split(separator: ",") {
                let trimmed = element.trimmingOWS()
                if !trimmed.isEmpty { result.append(trimmed) }
            }
        }
        return result
    }

    public func makeIterator() -> IndexingIterator<[Field]> { storage.makeIterator() }
}

extension Substring {
    /// Trims optional whitespace (SP / HTAB) from both ends.
    public func trimmingOWS() -> Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
