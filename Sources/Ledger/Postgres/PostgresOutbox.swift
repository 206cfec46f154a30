import Foundation

/// The SQL of the outbox on PostgreSQL, run in pooled `READ COMMITTED` transactions. Of instances claiming at
/// once, each locks the rows it takes (`FOR UPDATE SKIP LOCKED`), so an item goes to one of them; a claim
/// lapses after its lease, so an item claimed by an instance that died is taken over then. Only the first
/// pending item of an ordering key can be claimed, which keeps a purchase's items in order across instances.
struct PostgresOutbox {
    let connection: PostgresConnection

    static let columns = """
        id, queue, key, ordering_key, payload, created_ms, deadline_ms, state, attempts, next_attempt_ms, finished_ms, last_error,
        outcome
        """

    /// Queues entries inside the caller's transaction (see `enqueue`).
    func insert(_ entries: [OutboxEntry]) throws(PostgresError) {
        _ = try enqueue(entries)
    }

    /// See `SQLiteOutbox.enqueue`.
    func enqueue(_ entries: [OutboxEntry]) throws(PostgresError) -> Int {
        guard !entries.isEmpty else { return 0 }
        return try connection.query(
            """
            INSERT INTO outbox (queue, key, ordering_key, payload, created_ms, deadline_ms, next_attempt_ms)
            SELECT e.queue, e.key, e.ordering_key, e.payload, e.created, e.deadline, e.created
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
                WITH ORDINALITY AS e(queue, key, ordering_key, payload, created, deadline, position)
            ORDER BY e.position
            ON CONFLICT (key) DO NOTHING
            """,
            [.textArray(entries.map(\.queue.rawValue)), .textArray(entries.map(\.key)), .textArray(entries.map(\.orderingKey)),
             .textArray(entries.map(\.payload)), .integerArray(entries.map { LedgerTime.milliseconds($0.created) }),
             .integerArray(entries.map { LedgerTime.milliseconds($0.deadline) })]).affectedRows
    }

    /// See `SQLiteOutbox.claim`; claims of other instances hold until they lapse.
    func claim(queue: OutboxQueue, owner: String, now: Date, lease: Double, limit: Int) throws(PostgresError) -> [OutboxItem] {
        let nowMS = LedgerTime.milliseconds(now)
        return try connection.query(
            """
            UPDATE outbox SET claimed_by = $3, claim_expires_ms = $4
            WHERE id IN (
                SELECT o.id FROM outbox o
                WHERE o.queue = $1 AND o.state = 'pending' AND o.next_attempt_ms <= $2
                  AND (o.claimed_by IS NULL OR o.claim_expires_ms <= $2)
                  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.queue = o.queue AND p.ordering_key = o.ordering_key
                                  AND p.state = 'pending' AND p.id < o.id)
                ORDER BY o.id LIMIT $5 FOR UPDATE SKIP LOCKED)
              AND state = 'pending' AND (claimed_by IS NULL OR claim_expires_ms <= $2)
            RETURNING \(Self.columns)
            """,
            [.text(queue.rawValue), .integer(nowMS), .text(owner), .integer(nowMS + Int64(lease * 1000)), .integer(Int64(limit))]
        ).rows.map(Self.item).sorted { $0.id < $1.id }
    }

    /// See `SQLiteOutbox.finish`.
    func finish(id: Int64, state: OutboxState, now: Date, error: String?, outcome: String?) throws(PostgresError) {
        try connection.query(
            """
            UPDATE outbox SET state = $1, attempts = attempts + 1, finished_ms = $2, last_error = COALESCE($3, last_error),
                outcome = $5, claimed_by = NULL, claim_expires_ms = NULL
            WHERE id = $4 AND state = 'pending'
            """, [.text(state.rawValue), .integer(LedgerTime.milliseconds(now)), error.map { .text($0) } ?? .null, .integer(id),
                  outcome.map { .text($0) } ?? .null])
    }

    /// See `SQLiteOutbox.retry`.
    func retry(id: Int64, nextAttempt: Date, error: String) throws(PostgresError) {
        try connection.query(
            """
            UPDATE outbox SET attempts = attempts + 1, next_attempt_ms = $1, last_error = $2, claimed_by = NULL,
                claim_expires_ms = NULL
            WHERE id = $3 AND state = 'pending'
            """, [.integer(LedgerTime.milliseconds(nextAttempt)), .text(error), .integer(id)])
    }

    /// See `SQLiteOutbox.pendingCount`.
    func pendingCount(queue: OutboxQueue) throws(PostgresError) -> Int {
        Int(try connection.query("SELECT count(*) FROM outbox WHERE queue = $1 AND state = 'pending'",
                                 [.text(queue.rawValue)]).scalar ?? "0") ?? 0
    }

    /// See `SQLiteOutbox.items`.
    func items(queue: OutboxQueue, orderingKey: String) throws(PostgresError) -> [OutboxItem] {
        try connection.query("SELECT \(Self.columns) FROM outbox WHERE queue = $1 AND ordering_key = $2 ORDER BY id",
                             [.text(queue.rawValue), .text(orderingKey)]).rows.map(Self.item)
    }

    private static func item(_ row: [String?]) -> OutboxItem {
        func integer(_ index: Int) -> Int64? { row[index].flatMap { Int64($0) } }
        return OutboxItem(
            id: integer(0) ?? 0,
            entry: OutboxEntry(
                queue: OutboxQueue(rawValue: row[1] ?? "") ?? .webhook, key: row[2] ?? "", orderingKey: row[3] ?? "",
                payload: row[4] ?? "", created: LedgerTime.date(integer(5) ?? 0), deadline: LedgerTime.date(integer(6) ?? 0)),
            state: OutboxState(rawValue: row[7] ?? "") ?? .pending, attempts: Int(integer(8) ?? 0),
            nextAttempt: LedgerTime.date(integer(9) ?? 0), finished: integer(10).map(LedgerTime.date), lastError: row[11], outcome: row[12])
    }
}
