public import Foundation

/// One in-app purchase from a `verifyReceipt` response (`receipt.in_app`, `latest_receipt_info`, or an
/// iOS 6-style `receipt`), with typed dates.
public struct ReceiptPurchase: Sendable, Equatable {
    /// `product_id`.
    public var productID: String
    /// `transaction_id` (a JSON number is kept as its decimal text).
    public var transactionID: String
    /// `original_transaction_id`.
    public var originalTransactionID: String
    /// `purchase_date_ms` (or `purchase_date`).
    public var purchaseDate: Date
    /// `expires_date_ms` (or `expires_date`, milliseconds in iOS 6 style); `nil` for non-subscriptions.
    public var expiresDate: Date?
    /// `cancellation_date_ms` (or `cancellation_date`): set when Apple refunded or revoked the purchase.
    public var cancellationDate: Date?
    /// `quantity` (1 when absent).
    public var quantity: Int

    /// Creates a purchase.
    public init(
        productID: String, transactionID: String, originalTransactionID: String, purchaseDate: Date,
        expiresDate: Date? = nil, cancellationDate: Date? = nil, quantity: Int = 1
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.quantity = quantity
    }
}
