public import Foundation

/// One revocation of a purchase as the ledger holds it: in force, or lifted later (by `REFUND_REVERSED` or a
/// support restore).
public struct RevocationRecord: Sendable, Equatable {
    /// The reason a support decision is recorded with (Apple's revocations carry the notification type,
    /// `REFUND` or `REVOKE`, or `receipt`/`jws` when the purchase data carried the date).
    public static let supportReason = "support"

    /// The key of a support revocation's row: `admin:<original transaction ID>:<n>`, `n` the purchase's
    /// revocations on file before it (so one decision is recorded once, whichever instance makes it).
    public static func supportKey(originalTransactionID: String, number: Int) -> String {
        "admin:\(originalTransactionID):\(number)"
    }

    /// Whether a revocation row's key is a support revocation's (no App Store transaction has such an ID).
    public static func isSupportKey(_ key: String) -> Bool { key.hasPrefix("admin:") }

    /// The refunded or revoked transaction; `nil` for a support revocation, which concerns the purchase as a
    /// whole (its row is keyed `admin:<original transaction ID>:<n>`).
    public var transactionID: String?
    /// When the revocation took effect.
    public var at: Date
    /// Why: `REFUND`, `REVOKE`, `receipt`, `jws`, or `support`.
    public var reason: String
    /// Who decided it.
    public var by: RevocationAuthority
    /// When it was lifted; `nil` while it is in force.
    public var restoredAt: Date?
    /// Who lifted it (`REFUND_REVERSED`: Apple; a support restore: admin); `nil` while it is in force, and for
    /// one lifted before the ledger recorded who did (schema versions before the deliveries migration).
    public var restoredBy: RevocationAuthority?

    /// Creates a revocation record.
    public init(transactionID: String?, at: Date, reason: String, by: RevocationAuthority, restoredAt: Date?,
                restoredBy: RevocationAuthority? = nil) {
        self.transactionID = transactionID
        self.at = at
        self.reason = reason
        self.by = by
        self.restoredAt = restoredAt
        self.restoredBy = restoredBy
    }
}
