/// The state of an auto-renewable subscription in Get All Subscription Statuses (`status`, an
/// integer on the wire).
public struct SubscriptionStatus: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The subscription is active.
    public static let active = SubscriptionStatus(rawValue: 1)
    /// The subscription has expired.
    public static let expired = SubscriptionStatus(rawValue: 2)
    /// Apple is retrying billing.
    public static let billingRetry = SubscriptionStatus(rawValue: 3)
    /// The billing grace period is running: the customer keeps access.
    public static let billingGracePeriod = SubscriptionStatus(rawValue: 4)
    /// Apple revoked the subscription (refund or Family Sharing ended).
    public static let revoked = SubscriptionStatus(rawValue: 5)

    public var description: String { String(rawValue) }
}
