import Foundation

/// The SQL of the outbox on PostgreSQL, run in pooled `READ COMMITTED` transactions. Of instances claiming at
/// once, each locks the rows it takes (`FOR UPDATE SKIP LOCKED`), so an item goes to one of them; a claim
/// lapses after its lease, so an item claimed by an instance that died is taken over then. Only the first
/// pending item of an ordering key can be claimed, and none while another item of its key is claimed, which
/// keeps a purchase's items in order across instances, one in flight at a time.
///
/// IDs come from the identity column when a row is inserted, not when its transaction commits: two transactions
/// queueing for one key could commit in the other order, and a claim between the two commits would hand out the
/// later item first. So an enqueue takes a transaction-scoped advisory lock per ordering key (`lockNamespace`,
/// `hashtext(key)`, in hash order) before its rows get their IDs: a second transaction queueing for the key waits
/// until the first commits, and a key's IDs increase in commit order. The lock is taken in the `INSERT` itself
/// (no extra round trip) and is the last lock the enqueuing transaction takes.
package struct PostgresOutbox {
    let connection: PostgresConnection

    /// The advisory-lock namespace of the per-key enqueue locks (`'DepO'`).
    static let lockNamespace: Int32 = 0x4465_704F

    /// The `INSERT` of `enqueue`: the ordering keys' locks (a CTE materialized once, before any row is formed),
    /// then the rows in their order; `$1`…`$6` the entries' columns, `$7` the lock namespace.
    package static let enqueueStatement = """
        WITH ordering_locks AS (
            SELECT pg_advisory_xact_lock($7::int4, k.hash)
            FROM (SELECT DISTINCT hashtext(key) AS hash FROM unnest($3::text[]) AS key ORDER BY 1 OFFSET 0) k
        )
        INSERT INTO outbox (queue, key, ordering_key, payload, created_ms, deadline_ms, next_attempt_ms)
        SELECT e.queue, e.key, e.ordering_key, e.payload, e.created, e.deadline, e.created
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
            WITH ORDINALITY AS e(queue, key, ordering_key, payload, created, deadline, position)
        WHERE (SELECT count(*) FROM ordering_locks) >= 0
        ORDER BY e.position
        ON CONFLICT (key) DO NOTHING
        """

    /// The parameters of `enqueueStatement` for `entries`.
    package static func enqueueParameters(_ entries: [OutboxEntry]) -> [PostgresValue] {
        [.textArray(entries.map(\.queue.rawValue)), .textArray(entries.map(\.key)), .textArray(entries.map(\.orderingKey)),
         .textArray(entries.map(\.payload)), .integerArray(entries.map { LedgerTime.milliseconds($0.created) }),
         .integerArray(entries.map { LedgerTime.milliseconds($0.deadline) }), .integer(Int64(lockNamespace))]
    }

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
        return try connection.query(Self.enqueueStatement, Self.enqueueParameters(entries)).affectedRows
    }

    /// See `SQLiteOutbox.claim`; claims of other instances hold until they lapse, and an item waits while another
    /// item of its key is claimed (by anyone, until that claim lapses).
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
                  AND NOT EXISTS (SELECT 1 FROM outbox c WHERE c.queue = o.queue AND c.ordering_key = o.ordering_key
                                  AND c.state = 'pending' AND c.id <> o.id AND c.claimed_by IS NOT NULL
                                  AND c.claim_expires_ms > $2)
                ORDER BY o.id LIMIT $5 FOR UPDATE SKIP LOCKED)
              AND state = 'pending' AND (claimed_by IS NULL OR claim_expires_ms <= $2)
            RETURNING \(Self.columns)
            """,
            [.text(queue.rawValue), .integer(nowMS), .text(owner), .integer(nowMS + Int64(lease * 1000)), .integer(Int64(limit))]
        ).rows.map(Self.item).sorted { $0.id < $1.id }
    }

    /// See `SQLiteOutbox.finish`.
    func finish(id: Int64, state: OutboxState, now: Date, error: String?, outcome: String?, enqueue: [OutboxEntry] = []) throws(PostgresError) {
        let ended = try connection.query(
            """
            UPDATE outbox SET state = $1, attempts = attempts + 1, finished_ms = $2, last_error = COALESCE($3, last_error),
                outcome = $5, claimed_by = NULL, claim_expires_ms = NULL
            WHERE id = $4 AND state = 'pending'
            """, [.text(state.rawValue), .integer(LedgerTime.milliseconds(now)), error.map { .text($0) } ?? .null, .integer(id),
                  outcome.map { .text($0) } ?? .null]).affectedRows
        if ended == 1 { try insert(enqueue) }
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

    /// See `SQLiteOutbox.items(queue:orderingKey:)`.
    func items(queue: OutboxQueue, orderingKey: String) throws(PostgresError) -> [OutboxItem] {
        try items(queue: queue, orderingKeys: [orderingKey])
    }

    /// See `SQLiteOutbox.items(queue:orderingKeys:)`.
    func items(queue: OutboxQueue, orderingKeys: [String]) throws(PostgresError) -> [OutboxItem] {
        try connection.query("SELECT \(Self.columns) FROM outbox WHERE queue = $1 AND ordering_key = ANY($2::text[]) ORDER BY id",
                             [.text(queue.rawValue), PostgresValue.textArray(orderingKeys)]).rows.map(Self.item)
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
