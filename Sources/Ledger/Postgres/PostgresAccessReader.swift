/// Reads access entries from PostgreSQL for the change feed, each read in one statement (one snapshot)
/// together with that snapshot's `xmin`: the oldest transaction still running when it was taken.
///
/// Why `xmin` and not a sequence: writers take their transaction IDs (or sequence numbers) in one order and
/// commit in another, so "everything above the highest number seen" misses a change that commits late. Every
/// transaction below a snapshot's `xmin` had finished when the snapshot was taken, so its changes are in that
/// read; any change the read did not see belongs to a transaction at or above `xmin`. Reading the
/// `original_transactions` rows with `changed_xid >= xmin` of the previous read therefore finds every change,
/// whatever the order of commits (a few are read twice, which is harmless: entries are whole states).
///
/// Cost: a poll reads the few changed originals through the `changed_xid` index, then each one's entry by
/// index lookups of that original alone (`LATERAL`: its revocations, its transactions, its bindings), so it
/// costs the same in a ledger of a thousand purchases or of millions. The statement is prepared once and
/// runs with a generic plan, which knows nothing of the mark: for `changed_xid >= $1` alone PostgreSQL
/// assumes a third of the table (and read whole tables with set-wise joins on every poll, 1 ms at 3,000
/// purchases and growing); the upper bound `changed_xid < xmax of this snapshot` filters out nothing (a
/// change by a transaction at or after `xmax` is not visible to this snapshot) but makes it a range, which
/// the planner assumes to be small.
package struct PostgresAccessReader {
    let connection: PostgresConnection

    /// Every bound or revoked original's entry, and the snapshot's `xmin` (the mark for the next poll).
    func all() throws(PostgresError) -> (mark: String, entries: [String: AccessEntry]) {
        try read(
            """
            SELECT original_transaction_id AS id FROM account_bindings
            UNION SELECT original_transaction_id FROM revocations WHERE restored_at_ms IS NULL
            """, [])
    }

    /// The entries of the originals changed by transactions at or above `mark` (default entries included, so
    /// the index drops them), and the new mark. With `announce`, the same statement sends the change feeds'
    /// `NOTIFY` on `channel` (at the end of the read, after every commit it saw): this instance's writers
    /// asked for the read, so other instances have something to read too.
    func changed(since mark: String, announce channel: String? = nil) throws(PostgresError) -> (mark: String, entries: [String: AccessEntry]) {
        guard let channel else { return try read(Self.changedCandidates, [.text(mark)]) }
        return try read(Self.changedCandidates, [.text(mark), .text(channel)], announcing: true)
    }

    /// Revocation rule (as `SQLiteLedgerStore`): revoked when some revocation in force is not followed by a
    /// later non-revoked transaction; a revocation's time is its transaction's purchase date, or the
    /// revocation date when that transaction was never seen. `announcing`: the last parameter is a channel to
    /// `NOTIFY`.
    private func read(
        _ candidates: String, _ parameters: [PostgresValue], announcing: Bool = false
    ) throws(PostgresError) -> (mark: String, entries: [String: AccessEntry]) {
        let rows = try connection.query(Self.statement(candidates, announceParameter: announcing ? parameters.count : nil), parameters)
        var mark: String?
        var entries: [String: AccessEntry] = [:]
        for row in rows.rows {
            if let snapshotMark = row[0] {
                mark = snapshotMark
                continue
            }
            guard let original = row[1] else { continue }
            var entry = entries[original] ?? AccessEntry(accounts: [], revoked: false)
            if row[2] == "true" { entry.revoked = true }
            if let account = row[3] { entry.accounts.insert(account) }
            entries[original] = entry
        }
        guard let mark else { throw PostgresError(message: "the change feed's read returned no snapshot mark") }
        return (mark, entries)
    }

    /// The candidates of a poll: the originals whose mark is at or above `$1` (see the type's note on the bound).
    package static let changedCandidates = """
        SELECT original_transaction_id AS id FROM original_transactions
        WHERE changed_xid >= $1::xid8 AND changed_xid < pg_snapshot_xmax(pg_current_snapshot())
        """

    /// The read's statement: the mark row, then one row per candidate and bound account (`NULL` for none)
    /// with whether it is revoked. With `announceParameter` (the number of the channel's parameter), the
    /// `NOTIFY` runs in a CTE that feeds the mark row, so exactly once. "No revocation in force" is a scalar
    /// subquery on the revocation's primary key, not `NOT EXISTS`, which the planner may turn into a hash
    /// anti-join over every revocation; `OFFSET 0` keeps the bindings' subquery per candidate (without it the
    /// planner pulls it up into a hash join over every binding).
    package static func statement(_ candidates: String, announceParameter: Int? = nil) -> String {
        let announce = announceParameter.map { "announce AS (SELECT pg_notify($\($0), '')), " } ?? ""
        return """
            WITH \(announce)candidates AS MATERIALIZED (\(candidates))
            SELECT pg_snapshot_xmin(pg_current_snapshot())::text, NULL, NULL, NULL\(announceParameter == nil ? "" : " FROM announce")
            UNION ALL
            SELECT NULL, c.id, (v.at_ms IS NOT NULL AND (a.at_ms IS NULL OR a.at_ms <= v.at_ms))::text, b.account
            FROM candidates c
            CROSS JOIN LATERAL (
                SELECT MAX(COALESCE(t.purchase_date_ms, r.revoked_at_ms)) AS at_ms
                FROM revocations r LEFT JOIN transactions t ON t.transaction_id = r.transaction_id
                WHERE r.original_transaction_id = c.id AND r.restored_at_ms IS NULL) v
            CROSS JOIN LATERAL (
                SELECT MAX(t.purchase_date_ms) AS at_ms FROM transactions t
                WHERE v.at_ms IS NOT NULL AND t.original_transaction_id = c.id
                  AND (SELECT r.restored_at_ms IS NULL FROM revocations r WHERE r.transaction_id = t.transaction_id) IS NOT TRUE) a
            LEFT JOIN LATERAL (SELECT account FROM account_bindings WHERE original_transaction_id = c.id OFFSET 0) b ON true
            """
    }
}
