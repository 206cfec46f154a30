import Foundation

/// One ledger backend: the operations `Ledger` offers, with the same semantics on SQLite and PostgreSQL
/// (see `Ledger` for the access rules). A backend keeps the `AccessIndex` it was opened with current: after
/// each of its own commits, and (PostgreSQL) after every change another instance commits.
///
/// Adding a table and its operations: append a migration to `SQLiteLedgerSchema` and to
/// `PostgresLedgerSchema`, add the operation here, implement it in `SQLiteLedgerStore` (on the ledger's queue)
/// and `PostgresLedgerStore` (in a pooled transaction), forward it from `Ledger`, and add the table to
/// `LedgerExport` and the copy if it holds state that must move with the ledger.
protocol LedgerStorage: Sendable {
    /// Which backend this is.
    var backend: LedgerBackend { get }

    /// See `Ledger.record(_:account:policy:now:)`; `events` queues `granted` changes in the same transaction.
    func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date, events: AccessEvents?
    ) async throws(LedgerError) -> [String: BindingDecision]

    /// See `Ledger.apply(notificationID:type:revoke:restore:by:now:)`; `events` queues `revoked` and `restored`
    /// changes in the same transaction.
    func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], by: String, now: Date,
        events: AccessEvents?
    ) async throws(LedgerError) -> Bool

    /// See `Ledger.purchases(originalTransactionID:)`.
    func purchases(originalTransactionID: String) async throws(LedgerError) -> [LedgerPurchase]

    /// The rows of the purchase `transactionID` belongs to (see `Ledger.purchase(transactionID:)`); `nil`
    /// when no transaction has that ID or original transaction ID.
    func purchaseRows(transactionID: String) async throws(LedgerError) -> PurchaseRows?

    /// The rows of up to `limit` purchases bound to `account` after `after`, newest first (see
    /// `Ledger.purchases(account:after:limit:)`): one read of a few statements, however many purchases it
    /// finds (each detail read names them all at once).
    func purchaseRows(account: String, after: PurchaseCursor?, limit: Int) async throws(LedgerError) -> PurchaseRows

    /// See `Ledger.claimNotificationSync(environment:owner:now:lease:)`.
    func claimNotificationSync(environment: String, owner: String, now: Date, lease: Double) async throws(LedgerError) -> NotificationSyncClaim

    /// See `Ledger.completeNotificationSync(environment:owner:through:)`.
    func completeNotificationSync(environment: String, owner: String, through end: Date) async throws(LedgerError) -> Bool

    /// See `Ledger.releaseNotificationSync(environment:owner:)`.
    func releaseNotificationSync(environment: String, owner: String) async throws(LedgerError)

    /// See `Ledger.recordDeliveries(_:)`; `events` queues completions in the same transaction.
    func recordDeliveries(_ spans: [DeliverySpan], events: DeliveryEvents?) async throws(LedgerError) -> [DeliveryProgress]

    /// See `Ledger.deliveries(originalTransactionID:)`.
    func deliveries(originalTransactionID: String) async throws(LedgerError) -> [LedgerDelivery]

    /// See `Ledger.enqueue(_:)`.
    func enqueue(_ entries: [OutboxEntry]) async throws(LedgerError) -> Int

    /// See `Ledger.claimOutbox(queue:owner:now:lease:limit:)`.
    func claimOutbox(queue: OutboxQueue, owner: String, now: Date, lease: Double, limit: Int) async throws(LedgerError) -> [OutboxItem]

    /// See `Ledger.finishOutbox(id:state:now:error:outcome:enqueue:)`.
    func finishOutbox(id: Int64, state: OutboxState, now: Date, error: String?, outcome: String?,
                      enqueue: [OutboxEntry]) async throws(LedgerError)

    /// See `Ledger.reconcileLiveVersions(_:previous:now:announce:)`.
    func reconcileLiveVersions(_ live: [String: Int], previous: [String: Int]?, now: Date,
                               announce: @escaping LiveVersionEvents) async throws(LedgerError) -> [LiveVersionChange]

    /// See `Ledger.retryOutbox(id:nextAttempt:error:)`.
    func retryOutbox(id: Int64, nextAttempt: Date, error: String) async throws(LedgerError)

    /// See `Ledger.pendingOutboxCount(queue:)`.
    func pendingOutboxCount(queue: OutboxQueue) async throws(LedgerError) -> Int

    /// See `Ledger.outboxItems(queue:orderingKey:)`.
    func outboxItems(queue: OutboxQueue, orderingKey: String) async throws(LedgerError) -> [OutboxItem]

    /// See `Ledger.tokenKey(generate:)`.
    func tokenKey(generate: @escaping @Sendable () -> [UInt8]) async throws(LedgerError) -> [UInt8]

    /// A lock held across hosts for a publish of `pack`, or `nil` when the backend serves one host only
    /// (SQLite: the publisher's file lock already serializes publishes there).
    func publishLock(pack: String) async throws(LedgerError) -> LedgerPublishLock?

    /// See `Ledger.checkWritable()`.
    func checkWritable() async -> Bool

    /// See `Ledger.health`.
    var health: LedgerHealth { get }

    /// See `Ledger.propagation`.
    var propagation: LedgerPropagation { get }

    /// Makes the backend refuse writes (`true`) or accept them again: a stand-in for a database that stopped
    /// accepting writes (tests).
    func setQueryOnly(_ on: Bool) async throws(LedgerError)

    /// Closes the backend after the calls in flight; later calls throw `.closed`.
    func close() async
}
