import Foundation

/// The delivery record and the outbox on SQLite: each operation on the ledger's queue.
extension SQLiteLedgerStorage {
    func recordDeliveries(_ spans: [DeliverySpan], events: DeliveryEvents?) async throws(LedgerError) -> [DeliveryProgress] {
        try await write { database throws(SQLiteError) in try SQLiteDeliveryRecords(database: database).record(spans, events: events) }
    }

    func deliveries(originalTransactionID: String) async throws(LedgerError) -> [LedgerDelivery] {
        try await read { database throws(SQLiteError) in
            try SQLiteDeliveryRecords(database: database).deliveries(originalTransactionID: originalTransactionID)
        }
    }

    func enqueue(_ entries: [OutboxEntry]) async throws(LedgerError) -> Int {
        try await write { database throws(SQLiteError) in try SQLiteOutbox(database: database).enqueue(entries) }
    }

    func claimOutbox(queue: OutboxQueue, owner: String, now: Date, lease: Double, limit: Int) async throws(LedgerError) -> [OutboxItem] {
        try await write { database throws(SQLiteError) in
            try SQLiteOutbox(database: database).claim(queue: queue, owner: owner, now: now, lease: lease, limit: limit)
        }
    }

    func finishOutbox(id: Int64, state: OutboxState, now: Date, error: String?, outcome: String?,
                      enqueue: [OutboxEntry]) async throws(LedgerError) {
        try await write { database throws(SQLiteError) in
            try SQLiteOutbox(database: database).finish(id: id, state: state, now: now, error: error, outcome: outcome, enqueue: enqueue)
        }
    }

    func reconcileLiveVersions(_ live: [String: Int], previous: [String: Int]?, now: Date,
                               announce: @escaping LiveVersionEvents) async throws(LedgerError) -> [LiveVersionChange] {
        try await write { database throws(SQLiteError) in
            try SQLiteLiveVersions(database: database).reconcile(live, previous: previous, now: now, announce: announce)
        }
    }

    func retryOutbox(id: Int64, nextAttempt: Date, error: String) async throws(LedgerError) {
        try await write { database throws(SQLiteError) in
            try SQLiteOutbox(database: database).retry(id: id, nextAttempt: nextAttempt, error: error)
        }
    }

    func pendingOutboxCount(queue: OutboxQueue) async throws(LedgerError) -> Int {
        try await read { database throws(SQLiteError) in try SQLiteOutbox(database: database).pendingCount(queue: queue) }
    }

    func outboxItems(queue: OutboxQueue, orderingKey: String) async throws(LedgerError) -> [OutboxItem] {
        try await read { database throws(SQLiteError) in
            try SQLiteOutbox(database: database).items(queue: queue, orderingKey: orderingKey)
        }
    }
}
