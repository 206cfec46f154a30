public import Foundation

/// One validated App Store transaction, as the ledger stores it.
///
/// Dates are kept to the millisecond (the App Store's own precision); finer fractions are dropped.
public struct LedgerPurchase: Sendable, Equatable {
    /// Where the purchase was validated.
    public enum Source: String, Sendable, Equatable, CaseIterable {
        /// A legacy app receipt checked through Apple's `verifyReceipt`.
        case receipt
        /// A StoreKit 2 signed transaction (JWS) verified locally.
        case jws
    }

    /// Apple's transaction ID (the primary key).
    public var transactionID: String
    /// The original transaction ID: the purchase a renewal or restore belongs to; account bindings and
    /// access decisions are per original transaction.
    public var originalTransactionID: String
    /// The App Store product identifier.
    public var productID: String
    /// `Production` or `Sandbox`, as Apple reported it.
    public var environment: String
    /// When the transaction was bought (a renewal's own purchase date).
    public var purchaseDate: Date
    /// When a subscription period ends; `nil` for non-subscriptions.
    public var expiresDate: Date?
    /// When Apple refunded or revoked the transaction, if it did. Read back from the ledger, this is the
    /// date of the revocation currently in force (`nil` once a `REFUND_REVERSED` restored it).
    public var revocationDate: Date?
    /// How the purchase was validated.
    public var source: Source

    /// Creates a purchase record.
    public init(
        transactionID: String, originalTransactionID: String, productID: String, environment: String,
        purchaseDate: Date, expiresDate: Date? = nil, revocationDate: Date? = nil, source: Source
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.environment = environment
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.source = source
    }
}
