import Foundation

/// The delivery record and the outbox on PostgreSQL: each operation in one pooled transaction.
extension PostgresLedgerStorage {
    func recordDeliveries(_ spans: [DeliverySpan], events: DeliveryEvents?) async throws(LedgerError) -> [DeliveryProgress] {
        try await write { connection throws(PostgresError) in
            try PostgresDeliveryRecords(connection: connection).record(spans, events: events)
        }
    }

    func deliveries(originalTransactionID: String) async throws(LedgerError) -> [LedgerDelivery] {
        try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresDeliveryRecords(connection: connection).deliveries(originalTransactionID: originalTransactionID)
        }
    }

    func enqueue(_ entries: [OutboxEntry]) async throws(LedgerError) -> Int {
        try await write { connection throws(PostgresError) in try PostgresOutbox(connection: connection).enqueue(entries) }
    }

    func claimOutbox(queue: OutboxQueue, owner: String, now: Date, lease: Double, limit: Int) async throws(LedgerError) -> [OutboxItem] {
        try await write { connection throws(PostgresError) in
            try PostgresOutbox(connection: connection).claim(queue: queue, owner: owner, now: now, lease: lease, limit: limit)
        }
    }

    func finishOutbox(id: Int64, state: OutboxState, now: Date, error: String?, outcome: String?,
                      enqueue: [OutboxEntry]) async throws(LedgerError) {
        try await write { connection throws(PostgresError) in
            try PostgresOutbox(connection: connection).finish(id: id, state: state, now: now, error: error, outcome: outcome, enqueue: enqueue)
        }
    }

    func reconcileLiveVersions(_ live: [String: Int], previous: [String: Int]?, now: Date,
                               announce: @escaping LiveVersionEvents) async throws(LedgerError) -> [LiveVersionChange] {
        try await write { connection throws(PostgresError) in
            try PostgresLiveVersions(connection: connection).reconcile(live, previous: previous, now: now, announce: announce)
        }
    }

    func retryOutbox(id: Int64, nextAttempt: Date, error: String) async throws(LedgerError) {
        try await write { connection throws(PostgresError) in
            try PostgresOutbox(connection: connection).retry(id: id, nextAttempt: nextAttempt, error: error)
        }
    }

    func pendingOutboxCount(queue: OutboxQueue) async throws(LedgerError) -> Int {
        try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresOutbox(connection: connection).pendingCount(queue: queue)
        }
    }

    func outboxItems(queue: OutboxQueue, orderingKey: String) async throws(LedgerError) -> [OutboxItem] {
        try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresOutbox(connection: connection).items(queue: queue, orderingKey: orderingKey)
        }
    }

    /// Runs `body` in a pooled `READ COMMITTED` transaction (read-only while the ledger refuses writes).
    private func write<Value: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> Value
    ) async throws(LedgerError) -> Value {
        try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }, body)
    }
}
