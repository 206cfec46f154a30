import Foundation

/// The SQL of the outbox (table `outbox`) on SQLite, run on the ledger's queue; each write is one
/// `BEGIN IMMEDIATE … COMMIT`.
///
/// A SQLite ledger serves one process, so only that process's own live claims keep an item from being
/// claimed: claims left by a process that was killed are taken over at once by the next one.
struct SQLiteOutbox {
    let database: SQLiteDatabase

    static let columns = """
        id, queue, key, ordering_key, payload, created_ms, deadline_ms, state, attempts, next_attempt_ms, finished_ms, last_error,
        outcome
        """

    /// Queues `entries` (those whose key is already there are skipped); returns how many were added.
    func enqueue(_ entries: [OutboxEntry]) throws(SQLiteError) -> Int {
        try database.transaction { () throws(SQLiteError) -> Int in
            var added = 0
            for entry in entries { added += try insert(entry) }
            return added
        }
    }

    /// Queues one entry inside the caller's transaction (nothing when its key is there); 1 when it was added.
    @discardableResult
    func insert(_ entry: OutboxEntry) throws(SQLiteError) -> Int {
        try database.run(
            """
            INSERT INTO outbox (queue, key, ordering_key, payload, created_ms, deadline_ms, next_attempt_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING
            """,
            [.text(entry.queue.rawValue), .text(entry.key), .text(entry.orderingKey), .text(entry.payload),
             .integer(LedgerTime.milliseconds(entry.created)), .integer(LedgerTime.milliseconds(entry.deadline)),
             .integer(LedgerTime.milliseconds(entry.created))])
    }

    /// Claims up to `limit` due items of `queue` that are first in line for their ordering key, for `owner`
    /// until `now + lease`.
    func claim(queue: OutboxQueue, owner: String, now: Date, lease: Double, limit: Int) throws(SQLiteError) -> [OutboxItem] {
        let nowMS = LedgerTime.milliseconds(now)
        return try database.transaction { () throws(SQLiteError) -> [OutboxItem] in
            let rows = try database.query(
                """
                SELECT \(Self.columns) FROM outbox o
                WHERE o.queue = ?1 AND o.state = 'pending' AND o.next_attempt_ms <= ?2
                  AND (o.claimed_by IS NULL OR o.claimed_by <> ?3 OR o.claim_expires_ms <= ?2)
                  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.queue = o.queue AND p.ordering_key = o.ordering_key
                                  AND p.state = 'pending' AND p.id < o.id)
                ORDER BY o.id LIMIT ?4
                """, [.text(queue.rawValue), .integer(nowMS), .text(owner), .integer(Int64(limit))])
            let items = rows.map(Self.item)
            for item in items {
                try database.run("UPDATE outbox SET claimed_by = ?, claim_expires_ms = ? WHERE id = ?",
                                 [.text(owner), .integer(nowMS + Int64(lease * 1000)), .integer(item.id)])
            }
            return items
        }
    }

    /// Ends `id`'s attempts as `state` (sent or abandoned), counting this attempt; when that ended it, queues
    /// `enqueue` in the same transaction.
    func finish(id: Int64, state: OutboxState, now: Date, error: String?, outcome: String?, enqueue: [OutboxEntry] = []) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            let ended = try database.run(
                """
                UPDATE outbox SET state = ?, attempts = attempts + 1, finished_ms = ?, last_error = COALESCE(?, last_error),
                    outcome = ?, claimed_by = NULL, claim_expires_ms = NULL
                WHERE id = ? AND state = 'pending'
                """,
                [.text(state.rawValue), .integer(LedgerTime.milliseconds(now)), error.map { .text($0) } ?? .null,
                 outcome.map { .text($0) } ?? .null, .integer(id)])
            if ended == 1 {
                for entry in enqueue { try insert(entry) }
            }
        }
    }

    /// Counts a failed attempt of `id` and schedules the next one at `nextAttempt`.
    func retry(id: Int64, nextAttempt: Date, error: String) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            _ = try database.run(
                """
                UPDATE outbox SET attempts = attempts + 1, next_attempt_ms = ?, last_error = ?, claimed_by = NULL,
                    claim_expires_ms = NULL
                WHERE id = ? AND state = 'pending'
                """, [.integer(LedgerTime.milliseconds(nextAttempt)), .text(error), .integer(id)])
        }
    }

    /// The number of pending items of `queue`.
    func pendingCount(queue: OutboxQueue) throws(SQLiteError) -> Int {
        Int(try database.query("SELECT count(*) FROM outbox WHERE queue = ? AND state = 'pending'",
                               [.text(queue.rawValue)]).first?.first?.integer ?? 0)
    }

    /// The items of `queue` with `orderingKey`, oldest first.
    func items(queue: OutboxQueue, orderingKey: String) throws(SQLiteError) -> [OutboxItem] {
        try items(queue: queue, orderingKeys: [orderingKey])
    }

    /// The items of `queue` with any of `orderingKeys`, oldest first: one statement, however many keys.
    func items(queue: OutboxQueue, orderingKeys: [String]) throws(SQLiteError) -> [OutboxItem] {
        try database.query(
            "SELECT \(Self.columns) FROM outbox WHERE queue = ? AND ordering_key IN (SELECT value FROM json_each(?)) ORDER BY id",
            [.text(queue.rawValue), SQLiteValue.textList(orderingKeys)]).map(Self.item)
    }

    /// Every outbox row, oldest first, without claims (for the copy to PostgreSQL, inside the export's read).
    func export(into export: inout LedgerExport) throws(SQLiteError) {
        export.outbox = try database.query(
            """
            SELECT queue, key, ordering_key, payload, created_ms, deadline_ms, state, attempts, next_attempt_ms, finished_ms,
                last_error, outcome FROM outbox ORDER BY id
            """
        ).map { row in
            LedgerExport.OutboxRow(
                queue: row[0].text ?? "", key: row[1].text ?? "", orderingKey: row[2].text ?? "", payload: row[3].text ?? "",
                createdMS: row[4].integer ?? 0, deadlineMS: row[5].integer ?? 0, state: row[6].text ?? "pending",
                attempts: row[7].integer ?? 0, nextAttemptMS: row[8].integer ?? 0, finishedMS: row[9].integer, lastError: row[10].text,
                outcome: row[11].text)
        }
    }

    private static func item(_ row: [SQLiteValue]) -> OutboxItem {
        OutboxItem(
            id: row[0].integer ?? 0,
            entry: OutboxEntry(
                queue: OutboxQueue(rawValue: row[1].text ?? "") ?? .webhook, key: row[2].text ?? "",
                orderingKey: row[3].text ?? "", payload: row[4].text ?? "",
                created: LedgerTime.date(row[5].integer ?? 0), deadline: LedgerTime.date(row[6].integer ?? 0)),
            state: OutboxState(rawValue: row[7].text ?? "") ?? .pending, attempts: Int(row[8].integer ?? 0),
            nextAttempt: LedgerTime.date(row[9].integer ?? 0), finished: row[10].integer.map(LedgerTime.date),
            lastError: row[11].text, outcome: row[12].text)
    }
}
