public import Foundation

/// A change of a purchase's access, as the ledger wrote it: what `purchase.granted`, `purchase.revoked` and
/// `purchase.restored` webhooks tell (spec app-store-server-api §8). Raised inside the transaction that made
/// the change, whichever path made it (a receipt, an App Store notification, the catch-up, a support decision)
/// and on whichever instance, so the event is queued exactly when the change commits.
public struct AccessChange: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The purchase was recorded for an account (or with none) and releases its pack to it.
        case granted
        /// A transaction of the purchase was refunded or revoked.
        case revoked
        /// A revocation was lifted (`REFUND_REVERSED`, or support).
        case restored
    }

    /// What happened.
    public var kind: Kind
    /// The purchase.
    public var originalTransactionID: String
    /// The transaction the change names (the newest one recorded, for `granted`; a support revocation's row
    /// key, `RevocationRecord.supportKey`, for a support revoke and the restore that lifts it).
    public var transactionID: String
    /// Its product, when the ledger has seen the transaction (else its original transaction's, if seen).
    public var productID: String?
    /// The account the purchase was granted to (`granted` with an account).
    public var account: String?
    /// Who decided: `apple` or `admin` (a support decision).
    public var by: String
    /// Why: the notification type or revocation reason (`revoked`, `restored`).
    public var reason: String?
    /// What caused it: the notification ID (`revoked`, `restored`), or `record` (`granted`).
    public var cause: String
    /// When the ledger recorded it.
    public var at: Date

    /// A change; see the properties.
    public init(kind: Kind, originalTransactionID: String, transactionID: String, productID: String?, account: String?,
                by: String, reason: String?, cause: String, at: Date) {
        self.kind = kind
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.productID = productID
        self.account = account
        self.by = by
        self.reason = reason
        self.cause = cause
        self.at = at
    }
}

/// Turns an access change into the outbox entry that announces it (nil: none), inside the ledger's write.
public typealias AccessEvents = @Sendable (AccessChange) -> OutboxEntry?

extension AccessChange {
    /// The `granted` changes of a `record`: one per original transaction decided `granted` and not revoked,
    /// naming its newest transaction in `purchases`.
    static func grants(_ purchases: [LedgerPurchase], decisions: [String: BindingDecision], account: String?, now: Date,
                       revoked: (String) -> Bool) -> [AccessChange] {
        var newest: [String: LedgerPurchase] = [:]
        var order: [String] = []
        for purchase in purchases {
            let original = purchase.originalTransactionID
            if newest[original] == nil { order.append(original) }
            if newest[original].map({ $0.purchaseDate <= purchase.purchaseDate }) ?? true { newest[original] = purchase }
        }
        return order.compactMap { original in
            guard decisions[original] == .granted, !revoked(original), let purchase = newest[original],
                  purchase.revocationDate == nil else { return nil }
            return AccessChange(kind: .granted, originalTransactionID: original, transactionID: purchase.transactionID,
                                productID: purchase.productID, account: account, by: "apple", reason: nil, cause: "record", at: now)
        }
    }
}
