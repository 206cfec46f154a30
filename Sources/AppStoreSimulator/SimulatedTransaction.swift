public import Foundation

/// A purchase the simulated App Store knows: it shows up in the customer's transaction history, in
/// subscription statuses (auto-renewables, with their renewals), in app receipts the store mints,
/// and in notifications about it.
public struct SimulatedTransaction: Sendable, Equatable {
    /// The product types, by their wire names.
    public enum ProductType: String, Sendable {
        case consumable = "Consumable"
        case nonConsumable = "Non-Consumable"
        case autoRenewable = "Auto-Renewable Subscription"
        case nonRenewing = "Non-Renewing Subscription"
    }

    /// This transaction's ID.
    public var transactionID: String
    /// The first transaction of the purchase (renewals keep it).
    public var originalTransactionID: String
    /// The product bought.
    public var productID: String
    /// The product's type.
    public var type: ProductType
    /// Where it was bought.
    public var environment: SimulatedAppStore.Environment
    /// Whose purchase it is: Get Transaction History answers with every transaction of the customer.
    public var customer: String
    /// When this transaction was charged.
    public var purchaseDate: Date
    /// When the original transaction was charged.
    public var originalPurchaseDate: Date
    /// When a subscription period ends.
    public var expiresDate: Date?
    /// When Apple refunded or revoked it.
    public var revocationDate: Date?
    /// 0 other, 1 an issue with the app.
    public var revocationReason: Int?
    /// Items bought.
    public var quantity: Int
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String
    /// Subscriptions: the group, and the line item of this period.
    public var subscriptionGroupIdentifier: String?
    /// The subscription period's line item.
    public var webOrderLineItemID: String?
    /// The UUID the app attached to the purchase.
    public var appAccountToken: String?

    /// The StoreKit 2 payload of this transaction (dates as integer milliseconds), signed at `signedDate`.
    func payload(bundleID: String, signedDate: Date) -> SimulatedJSON {
        var members: [SimulatedJSON.Member] = [
            .init("transactionId", .string(transactionID)), .init("originalTransactionId", .string(originalTransactionID)),
            .init("bundleId", .string(bundleID)), .init("productId", .string(productID)),
            .init("purchaseDate", .integer(Self.milliseconds(purchaseDate))),
            .init("originalPurchaseDate", .integer(Self.milliseconds(originalPurchaseDate))),
            .init("signedDate", .integer(Self.milliseconds(signedDate))), .init("type", .string(type.rawValue)),
            .init("environment", .string(environment.rawValue)), .init("quantity", .integer(Int64(quantity))),
            .init("inAppOwnershipType", .string("PURCHASED")), .init("transactionReason", .string(transactionReason)),
            .init("storefront", .string("USA")), .init("storefrontId", .string("143441")),
        ]
        if let expiresDate { members.append(.init("expiresDate", .integer(Self.milliseconds(expiresDate)))) }
        if let revocationDate { members.append(.init("revocationDate", .integer(Self.milliseconds(revocationDate)))) }
        if let revocationReason { members.append(.init("revocationReason", .integer(Int64(revocationReason)))) }
        if let subscriptionGroupIdentifier { members.append(.init("subscriptionGroupIdentifier", .string(subscriptionGroupIdentifier))) }
        if let webOrderLineItemID { members.append(.init("webOrderLineItemId", .string(webOrderLineItemID))) }
        if let appAccountToken { members.append(.init("appAccountToken", .string(appAccountToken))) }
        return .object(members)
    }

    /// App Store time: integer milliseconds since 1970.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
