import Foundation
import Ledger

/// The one path by which access to purchases is revoked or restored: App Store notifications (refunds,
/// revocations, `REFUND_REVERSED`, whether posted or caught up) and support decisions (the admin API) alike.
/// Each change is one `Ledger.apply` (one ledger transaction, recorded once per ID, in the access index of
/// every instance within the propagation bound); whatever must follow every such change is done here.
struct AccessChanges: Sendable {
    /// Where a change came from, for the log.
    enum Origin: Sendable {
        case notification
        /// A support decision about one purchase.
        case support(originalTransactionID: String)
    }

    let ledger: Ledger

    /// Applies the change recorded as `id` once; false when `id` was applied before (by any instance), in
    /// which case nothing changed.
    func apply(id: String, type: String, revoke: [LedgerRevocation], restore: [String], now: Date, origin: Origin,
               logger: Logger) async throws(LedgerError) -> Bool {
        let by: RevocationAuthority
        switch origin {
        case .notification: by = .apple
        case .support: by = .admin
        }
        let applied = try await ledger.apply(notificationID: id, type: type, revoke: revoke, restore: restore, by: by.rawValue, now: now)
        guard applied, !revoke.isEmpty || !restore.isEmpty else { return applied }
        switch origin {
        case .notification:
            logger.info(.notification, "notification \(type): revoked \(revoke.count), restored \(restore.count)")
        case .support(let original):
            logger.info(.supportDecision, "support decision \(type) for \(original): revoked \(revoke.count), restored \(restore.count)")
        }
        return applied
    }
}
