/// Reads access entries from PostgreSQL for the change feed, each read in one statement (one snapshot)
/// together with that snapshot's `xmin`: the oldest transaction still running when it was taken.
///
/// Why `xmin` and not a sequence: writers take their transaction IDs (or sequence numbers) in one order and
/// commit in another, so "everything above the highest number seen" misses a change that commits late. Every
/// transaction below a snapshot's `xmin` had finished when the snapshot was taken, so its changes are in that
/// read; any change the read did not see belongs to a transaction at or above `xmin`. Reading the
/// `original_transactions` rows with `changed_xid >= xmin` of the previous read therefore finds every change,
/// whatever the order of commits (a few are read twice, which is harmless: entries are whole states).
struct PostgresAccessReader {
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
    /// the index drops them), and the new mark.
    func changed(since mark: String) throws(PostgresError) -> (mark: String, entries: [String: AccessEntry]) {
        try read("SELECT original_transaction_id AS id FROM original_transactions WHERE changed_xid >= $1::xid8", [.text(mark)])
    }

    /// Revocation rule (as `SQLiteLedgerStore`): revoked when some revocation in force is not followed by a
    /// later non-revoked transaction; a revocation's time is its transaction's purchase date, or the
    /// revocation date when that transaction was never seen.
    private func read(_ candidates: String, _ parameters: [PostgresValue]) throws(PostgresError) -> (mark: String, entries: [String: AccessEntry]) {
        let rows = try connection.query(
            """
            WITH candidates AS (\(candidates)),
            latest_revoked AS (
                SELECT r.original_transaction_id AS id, MAX(COALESCE(t.purchase_date_ms, r.revoked_at_ms)) AS at_ms
                FROM revocations r LEFT JOIN transactions t ON t.transaction_id = r.transaction_id
                WHERE r.restored_at_ms IS NULL AND r.original_transaction_id IN (SELECT id FROM candidates)
                GROUP BY 1),
            latest_active AS (
                SELECT t.original_transaction_id AS id, MAX(t.purchase_date_ms) AS at_ms FROM transactions t
                WHERE t.original_transaction_id IN (SELECT id FROM latest_revoked)
                  AND NOT EXISTS (SELECT 1 FROM revocations r
                                  WHERE r.transaction_id = t.transaction_id AND r.restored_at_ms IS NULL)
                GROUP BY 1)
            SELECT pg_snapshot_xmin(pg_current_snapshot())::text, NULL, NULL, NULL
            UNION ALL
            SELECT NULL, c.id,
                (v.at_ms IS NOT NULL AND (a.at_ms IS NULL OR a.at_ms <= v.at_ms))::text, b.account
            FROM candidates c
            LEFT JOIN latest_revoked v ON v.id = c.id
            LEFT JOIN latest_active a ON a.id = c.id
            LEFT JOIN account_bindings b ON b.original_transaction_id = c.id
            """, parameters)
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
}
