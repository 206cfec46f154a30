/// A string value Apple sends on the wire (environment, transaction type, notification type...).
///
/// Conforming types are open structs rather than enums: a value Apple adds later still decodes
/// and keeps its raw text, while the known values are static members to compare against.
public protocol AppStoreWireValue: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue == String {
    /// Wraps any raw value, known or not.
    init(rawValue: String)
}

extension AppStoreWireValue {
    public var description: String { rawValue }
}
