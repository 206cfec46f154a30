public import Foundation

/// A refund or revocation of one transaction, taken from an App Store Server Notification.
public struct LedgerRevocation: Sendable, Equatable {
    /// The refunded or revoked transaction.
    public var transactionID: String
    /// The original transaction it belongs to (whose access is cut off).
    public var originalTransactionID: String
    /// When Apple revoked it (`revocationDate` / `cancellation_date_ms`).
    public var revokedAt: Date
    /// Why, for the record: usually the notification type (`REFUND`, `REVOKE`).
    public var reason: String

    /// Creates a revocation.
    public init(transactionID: String, originalTransactionID: String, revokedAt: Date, reason: String) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.revokedAt = revokedAt
        self.reason = reason
    }
}
