/// Coding keys the encoder makes up itself: `super`, and array indexes in coding paths.

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
