public import Foundation

/// What an App Store Server Notification does to access (spec §4.5): revoke these transactions, restore
/// these, or nothing but being recorded.
public enum NotificationEffect: Sendable, Equatable {
    /// One transaction to revoke.
    public struct Revocation: Sendable, Equatable {
        public var transactionID: String
        public var originalTransactionID: String
        /// When Apple revoked it.
        public var revokedAt: Date
        /// The notification type, for the record (`REFUND`, `REVOKE`).
        public var reason: String

        public init(transactionID: String, originalTransactionID: String, revokedAt: Date, reason: String) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.revokedAt = revokedAt
            self.reason = reason
        }
    }

    case revoke([Revocation])
    /// Transaction IDs whose revocation is reversed.
    case restore([String])
    /// Recorded and acknowledged; access does not change.
    case recordOnly

    /// The effect of a verified V2 notification: `REFUND`/`REVOKE` revoke its transaction (at its
    /// `revocationDate`, else when the notification was signed), `REFUND_REVERSED` restores it; any other
    /// type, or a notification without a transaction, is recorded only.
    public static func of(_ notification: StoreKitNotification) -> NotificationEffect {
        guard let transaction = notification.data?.transactionInfo else { return .recordOnly }
        let type = notification.notificationType
        if type.revokesAccess {
            return .revoke([Revocation(transactionID: transaction.transactionId, originalTransactionID: transaction.originalTransactionId,
                                       revokedAt: transaction.revocationDate ?? notification.signedDate, reason: type.rawValue)])
        }
        if type.restoresAccess { return .restore([transaction.transactionId]) }
        return .recordOnly
    }

    /// The effect of a V1 notification of `type` whose `unified_receipt` holds `purchases`: `REFUND`/`REVOKE`
    /// revoke those that carry a cancellation date; V1 never restores.
    public static func ofV1(type: NotificationType, purchases: [ReceiptPurchase]) -> NotificationEffect {
        guard type.revokesAccess else { return .recordOnly }
        let revocations = purchases.compactMap { purchase -> Revocation? in
            guard let cancellation = purchase.cancellationDate else { return nil }
            return Revocation(transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
                              revokedAt: cancellation, reason: type.rawValue)
        }
        return revocations.isEmpty ? .recordOnly : .revoke(revocations)
    }

    /// The transactions to revoke (empty unless `.revoke`).
    public var revocations: [Revocation] {
        if case .revoke(let list) = self { list } else { [] }
    }

    /// The transactions to restore (empty unless `.restore`).
    public var restorations: [String] {
        if case .restore(let list) = self { list } else { [] }
    }
}

extension NotificationType {
    /// `REFUND` and `REVOKE`: the transaction no longer grants access.
    public var revokesAccess: Bool { self == .refund || self == .revoke }
    /// `REFUND_REVERSED`: an earlier refund is undone.
    public var restoresAccess: Bool { self == .refundReversed }
}
