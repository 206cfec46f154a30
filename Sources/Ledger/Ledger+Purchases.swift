public import Foundation

/// Purchases as support sees them (spec app-store-server-api §7, §8): look-ups by transaction and by account,
/// and support decisions planned so that they take the refund's path through `apply`.
extension Ledger {
    /// The most purchases one page holds.
    public static let purchasePageLimit = 100

    /// The purchase that `transactionID` belongs to (any of its transactions, the original included); `nil`
    /// when the ledger has no such transaction.
    public func purchase(transactionID: String) async throws(LedgerError) -> PurchaseRecord? {
        guard let rows = try await storage.purchaseRows(transactionID: transactionID) else { return nil }
        return PurchaseRecord.assemble(rows, revoked: isRevoked).first
    }

    /// The purchases bound to `account`, newest first (by purchase date, then by original transaction ID,
    /// descending), at most `limit` (1–100) starting after `after`.
    public func purchases(account: String, after: PurchaseCursor? = nil, limit: Int = Ledger.purchasePageLimit) async throws(LedgerError) -> PurchasePage {
        let limit = min(max(limit, 1), Self.purchasePageLimit)
        let rows = try await storage.purchaseRows(account: account, after: after, limit: limit)
        let records = PurchaseRecord.assemble(rows, revoked: isRevoked)
        let last = rows.originals.last
        return PurchasePage(purchases: records,
                            next: rows.more ? last.map { PurchaseCursor(purchasedMS: $0.purchasedMS, originalTransactionID: $0.id) } : nil)
    }

    /// What `decision` changes for the purchase `originalTransactionID`, to be recorded with
    /// `apply(notificationID:type:revoke:restore:now:)` like any refund; `nil` when the ledger has no purchase
    /// with that original transaction ID. Empty (`isEmpty`) when the purchase already stands as decided.
    ///
    /// A revoke records a revocation with reason `support` at `now`, keyed `admin:<original>:<n>` (the purchase
    /// as a whole, not one transaction): it counts from `now`, so, as after a refund, a renewal bought later
    /// gives access back. A restore lifts every revocation in force, Apple's included.
    public func supportChange(_ decision: SupportDecision, originalTransactionID: String, now: Date) async throws(LedgerError) -> SupportChange? {
        guard let found = try await storage.purchaseRows(transactionID: originalTransactionID),
              let purchase = PurchaseRecord.assemble(found, revoked: isRevoked).first,
              purchase.originalTransactionID == originalTransactionID else { return nil }
        let rows = found.revocations
        switch decision {
        case .revoke:
            let number = rows.count
            let revoke = purchase.revoked ? [] : [LedgerRevocation(
                transactionID: RevocationRecord.supportKey(originalTransactionID: originalTransactionID, number: number), originalTransactionID: originalTransactionID, revokedAt: now,
                reason: RevocationRecord.supportReason)]
            return SupportChange(purchase: purchase, notificationID: "admin:revoke:\(originalTransactionID):\(number)",
                                 type: "ADMIN_REVOKE", revoke: revoke, restore: [])
        case .restore:
            let lifted = rows.filter { $0.restoredAtMS != nil }.count
            let restore = purchase.revoked ? rows.filter { $0.restoredAtMS == nil }.map(\.transactionID).sorted() : []
            return SupportChange(purchase: purchase, notificationID: "admin:restore:\(originalTransactionID):\(lifted)",
                                 type: "ADMIN_RESTORE", revoke: [], restore: restore)
        }
    }

    private var isRevoked: (String) -> Bool {
        { [self] original in access(originalTransactionID: original, account: nil) == .revoked }
    }
}
