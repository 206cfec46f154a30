public import Foundation

/// What the ledger knows of one purchase (an original transaction and its renewals or restores), for support
/// (spec app-store-server-api §7, §8): `depot purchases show` and `GET /admin/v1/purchases`.
public struct PurchaseRecord: Sendable, Equatable {
    /// The original transaction ID: the purchase's identity.
    public var originalTransactionID: String
    /// The product of its latest transaction.
    public var productID: String
    /// `Production` or `Sandbox`.
    public var environment: String
    /// When it was bought: its earliest transaction's purchase date.
    public var purchased: Date
    /// Its transactions, oldest first; `revocationDate` is that of a revocation in force.
    public var transactions: [LedgerPurchase]
    /// The accounts it is bound to, in binding order.
    public var accounts: [AccountBinding]
    /// Every revocation on file, in force or lifted, oldest first.
    public var revocations: [RevocationRecord]
    /// Whether its download tokens are refused as revoked now (the access rule of `Ledger`).
    public var revoked: Bool
    /// What was sent to it, per pack version (the delivery record of every instance).
    public var deliveries: [DeliverySummary] = []
    /// The answers to Apple's `CONSUMPTION_REQUEST`s about it, oldest first.
    public var consumptionAnswers: [LedgerConsumptionAnswer] = []

    /// Creates a record.
    public init(originalTransactionID: String, productID: String, environment: String, purchased: Date,
                transactions: [LedgerPurchase], accounts: [AccountBinding], revocations: [RevocationRecord], revoked: Bool,
                deliveries: [DeliverySummary] = [], consumptionAnswers: [LedgerConsumptionAnswer] = []) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.environment = environment
        self.purchased = purchased
        self.transactions = transactions
        self.accounts = accounts
        self.revocations = revocations
        self.revoked = revoked
        self.deliveries = deliveries
        self.consumptionAnswers = consumptionAnswers
    }

    /// The records of `rows`, in the order of `rows.originals`, with their delivery record and consumption
    /// answers; `revoked` says whether an original is cut off.
    static func assemble(_ rows: PurchaseRows, revoked: (String) -> Bool) -> [PurchaseRecord] {
        let transactions = Dictionary(grouping: rows.transactions, by: \.originalTransactionID)
        let bindings = Dictionary(grouping: rows.bindings, by: \.originalTransactionID)
        let revocations = Dictionary(grouping: rows.revocations, by: \.originalTransactionID)
        let deliveries = Dictionary(grouping: rows.deliveries, by: \.originalTransactionID)
        let answers = Dictionary(grouping: rows.consumptionItems, by: \.entry.orderingKey)
        return rows.originals.compactMap { original in
            let revokedInForce = Dictionary((revocations[original.id] ?? []).filter { $0.restoredAtMS == nil }
                .map { ($0.transactionID, $0.revokedAtMS) }, uniquingKeysWith: { first, _ in first })
            let purchases = (transactions[original.id] ?? [])
                .sorted { ($0.purchaseDateMS, $0.transactionID) < ($1.purchaseDateMS, $1.transactionID) }
                .map { row in
                    LedgerPurchase(transactionID: row.transactionID, originalTransactionID: row.originalTransactionID,
                                   productID: row.productID, environment: row.environment,
                                   purchaseDate: LedgerTime.date(row.purchaseDateMS), expiresDate: row.expiresDateMS.map(LedgerTime.date),
                                   revocationDate: revokedInForce[row.transactionID].map(LedgerTime.date),
                                   source: LedgerPurchase.Source(rawValue: row.source) ?? .receipt)
                }
            guard let latest = purchases.last else { return nil }
            return PurchaseRecord(
                originalTransactionID: original.id, productID: latest.productID, environment: latest.environment,
                purchased: LedgerTime.date(original.purchasedMS), transactions: purchases,
                accounts: (bindings[original.id] ?? []).sorted { ($0.boundAtMS, $0.account) < ($1.boundAtMS, $1.account) }
                    .map { AccountBinding(account: $0.account, boundAt: LedgerTime.date($0.boundAtMS)) },
                revocations: (revocations[original.id] ?? []).sorted { ($0.revokedAtMS, $0.transactionID) < ($1.revokedAtMS, $1.transactionID) }
                    .map(Self.revocation),
                revoked: revoked(original.id),
                deliveries: DeliverySummary.of(deliveries[original.id] ?? []),
                consumptionAnswers: (answers[original.id] ?? []).sorted { $0.id < $1.id }.compactMap(LedgerConsumptionAnswer.init))
        }
    }

    private static func revocation(_ row: LedgerExport.Revocation) -> RevocationRecord {
        let support = row.reason == RevocationRecord.supportReason
        return RevocationRecord(transactionID: support ? nil : row.transactionID, at: LedgerTime.date(row.revokedAtMS),
                                reason: row.reason, by: support ? .admin : .apple, restoredAt: row.restoredAtMS.map(LedgerTime.date),
                                restoredBy: row.restoredBy.flatMap(RevocationAuthority.init(rawValue:)))
    }
}
