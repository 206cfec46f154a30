/// The kind of in-app purchase (`type` of a signed transaction).
public struct TransactionType: AppStoreWireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An auto-renewable subscription.
    public static let autoRenewableSubscription = TransactionType(rawValue: "Auto-Renewable Subscription")
    /// A non-consumable one-time purchase.
    public static let nonConsumable = TransactionType(rawValue: "Non-Consumable")
    /// A consumable one-time purchase.
    public static let consumable = TransactionType(rawValue: "Consumable")
    /// A non-renewing subscription.
    public static let nonRenewingSubscription = TransactionType(rawValue: "Non-Renewing Subscription")
}
