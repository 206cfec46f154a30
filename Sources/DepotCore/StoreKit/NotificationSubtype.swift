/// App Store Server Notification V2 `subtype` (details of a `notificationType`).
public struct NotificationSubtype: AppStoreWireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// First purchase of a subscription.
    public static let initialBuy = NotificationSubtype(rawValue: "INITIAL_BUY")
    /// A returning subscriber.
    public static let resubscribe = NotificationSubtype(rawValue: "RESUBSCRIBE")
    /// Auto-renew was turned off by the customer.
    public static let autoRenewDisabled = NotificationSubtype(rawValue: "AUTO_RENEW_DISABLED")
    /// Auto-renew was turned on.
    public static let autoRenewEnabled = NotificationSubtype(rawValue: "AUTO_RENEW_ENABLED")
    /// The subscription expired after the customer chose not to renew.
    public static let voluntary = NotificationSubtype(rawValue: "VOLUNTARY")
    /// Billing retry ended without success.
    public static let billingRetry = NotificationSubtype(rawValue: "BILLING_RETRY")
}
