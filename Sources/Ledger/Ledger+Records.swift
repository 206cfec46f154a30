public import Foundation

/// The delivery record (spec app-store-server-api §7) and the outbox: the durable queues of webhook events
/// and consumption answers (§7, §8). Both backends keep the same semantics; with PostgreSQL, every instance
/// shares them.
extension Ledger {
    /// Merges what was sent into the delivery record, in one transaction: each span's bytes join those already
    /// recorded for its file (from any response, on any instance), and every chunk of `span.chunks` now
    /// covered whole is marked delivered with the span's time (a chunk stays delivered at its first time).
    /// Returns the chunks newly delivered per purchase and pack version. A version completed by this write is
    /// announced in the same transaction (see `raiseDeliveryEvents(_:)`).
    public func recordDeliveries(_ spans: [DeliverySpan]) async throws(LedgerError) -> [DeliveryProgress] {
        guard !spans.isEmpty else { return [] }
        return try await storage.recordDeliveries(spans, events: registeredDeliveryEvents)
    }

    /// What was sent to the purchase `originalTransactionID`: one record per pack file, by pack, version and
    /// path.
    public func deliveries(originalTransactionID: String) async throws(LedgerError) -> [LedgerDelivery] {
        try await storage.deliveries(originalTransactionID: originalTransactionID)
    }

    /// Queues `entries` durably (one transaction); an entry whose key is already in the outbox, in whatever
    /// state, is skipped. Returns how many were added.
    @discardableResult
    public func enqueue(_ entries: [OutboxEntry]) async throws(LedgerError) -> Int {
        guard !entries.isEmpty else { return 0 }
        return try await storage.enqueue(entries)
    }

    /// Claims for `owner`, until `now + lease` seconds, up to `limit` pending items of `queue` that are due
    /// and first in line for their ordering key, oldest first. An item claimed by another owner is not
    /// handed out until its claim lapses (SQLite, which serves one process, ignores claims of other owners:
    /// they were left by a process that is gone).
    public func claimOutbox(queue: OutboxQueue, owner: String, now: Date, lease: Double, limit: Int) async throws(LedgerError) -> [OutboxItem] {
        try await storage.claimOutbox(queue: queue, owner: owner, now: now, lease: lease, limit: max(1, limit))
    }

    /// Ends a pending item as `.sent` or `.abandoned` (counting the attempt; `error` kept when given; `outcome`,
    /// what the sending attempt recorded, kept with the item), which lets the next item of its ordering key go.
    /// `enqueue` (what announces the outcome: `consumption.sent`) is queued in the same transaction, when this
    /// call is the one that ended the item.
    public func finishOutbox(id: Int64, state: OutboxState, now: Date, error: String? = nil, outcome: String? = nil,
                             enqueue: [OutboxEntry] = []) async throws(LedgerError) {
        try await storage.finishOutbox(id: id, state: state, now: now, error: error, outcome: outcome, enqueue: enqueue)
    }

    /// Counts a failed attempt of a pending item and makes it due again at `nextAttempt`.
    public func retryOutbox(id: Int64, nextAttempt: Date, error: String) async throws(LedgerError) {
        try await storage.retryOutbox(id: id, nextAttempt: nextAttempt, error: error)
    }

    /// Records the packs' live versions `live` as a server sees them and queues, in the same transaction, the
    /// entry `announce` makes for each change (`pack.published`): a pack new to the record, or one whose recorded
    /// version differs, unless this server knew it at another version than the record's (`previous`, what this
    /// server last reconciled: another instance moved it while this one lagged). At a start (`previous` nil) an
    /// empty record is filled without announcements (a first start). Of instances reconciling the same change at
    /// once, one records and announces it. Returns the changes recorded.
    @discardableResult
    public func reconcileLiveVersions(_ live: [String: Int], previous: [String: Int]?, now: Date,
                                      announce: @escaping LiveVersionEvents) async throws(LedgerError) -> [LiveVersionChange] {
        try await storage.reconcileLiveVersions(live, previous: previous, now: now, announce: announce)
    }

    /// The number of pending items of `queue` (the queue length in `/metrics`).
    public func pendingOutboxCount(queue: OutboxQueue) async throws(LedgerError) -> Int {
        try await storage.pendingOutboxCount(queue: queue)
    }

    /// Every item of `queue` with `orderingKey`, oldest first (a purchase's consumption answers, say).
    public func outboxItems(queue: OutboxQueue, orderingKey: String) async throws(LedgerError) -> [OutboxItem] {
        try await storage.outboxItems(queue: queue, orderingKey: orderingKey)
    }
}

/// Reads for support (`depot purchases show`, the admin purchases API) and the consumption queue.
extension Ledger {
    /// What the purchase `originalTransactionID` was sent, per pack version (from every instance's record).
    public func deliverySummary(originalTransactionID: String) async throws(LedgerError) -> [DeliverySummary] {
        DeliverySummary.of(try await deliveries(originalTransactionID: originalTransactionID))
    }

    /// The answers to `CONSUMPTION_REQUEST`s about the purchase `originalTransactionID`, oldest first: pending,
    /// sent (with the answer Apple accepted) or abandoned.
    public func consumptionAnswers(originalTransactionID: String) async throws(LedgerError) -> [LedgerConsumptionAnswer] {
        try await outboxItems(queue: .consumption, orderingKey: originalTransactionID).compactMap(LedgerConsumptionAnswer.init)
    }

    /// Queues the answer to a verified `CONSUMPTION_REQUEST` durably (spec §7; before the notification is
    /// acknowledged). A request already queued (the same notification redelivered, or caught up from Apple's
    /// history) adds nothing: returns false.
    @discardableResult
    public func queueConsumptionAnswer(_ request: ConsumptionRequest, now: Date) async throws(LedgerError) -> Bool {
        try await enqueue([request.entry(now: now)]) == 1
    }
}
