/// Why Apple refunded or revoked a transaction (`revocationReason`, an integer on the wire).
public struct RevocationReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Refunded for another reason, e.g. an accidental purchase.
    public static let other = RevocationReason(rawValue: 0)
    /// Refunded because of an actual or perceived issue in the app.
    public static let appIssue = RevocationReason(rawValue: 1)

    public var description: String { String(rawValue) }
}
