extension PostgresLedgerStore {
    /// Rows per `INSERT … SELECT FROM unnest(...)` statement.
    static let importBatch = 1_000

    /// Adds `export`'s rows that are not there yet (`ON CONFLICT DO NOTHING`), in the copy's transaction.
    /// Bindings are added only for originals that have none here, so a binding moved or removed since an
    /// earlier copy is not brought back. `nil`, adding nothing, when the database holds purchases that no
    /// copy put there. The originals' locks are taken first, as every write does.
    func importRows(_ export: LedgerExport, source: String) throws(PostgresError) -> LedgerCopyReport? {
        let marker = try connection.query("SELECT 1 FROM ledger_settings WHERE name = 'copied_from_sqlite'")
        if marker.rows.isEmpty {
            let occupied = try connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM transactions) OR EXISTS (SELECT 1 FROM account_bindings)
                    OR EXISTS (SELECT 1 FROM revocations) OR EXISTS (SELECT 1 FROM processed_notifications)
                """).scalar
            if occupied == "t" { return nil }
        }
        let originals = export.originals
        try lock(Array(originals))
        var report = LedgerCopyReport()
        for batch in export.transactions.chunked(Self.importBatch) {
            report.transactions += try connection.query(
                """
                INSERT INTO transactions (transaction_id, original_transaction_id, product_id, environment,
                    purchase_date_ms, expires_date_ms, revocation_date_ms, source, first_seen_ms, updated_ms)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
                    $7::bigint[], $8::text[], $9::bigint[], $10::bigint[])
                ON CONFLICT (transaction_id) DO NOTHING
                """,
                [.textArray(batch.map(\.transactionID)), .textArray(batch.map(\.originalTransactionID)),
                 .textArray(batch.map(\.productID)), .textArray(batch.map(\.environment)),
                 .integerArray(batch.map(\.purchaseDateMS)), .integerArray(batch.map(\.expiresDateMS)),
                 .integerArray(batch.map(\.revocationDateMS)), .textArray(batch.map(\.source)),
                 .integerArray(batch.map(\.firstSeenMS)), .integerArray(batch.map(\.updatedMS))]).affectedRows
        }
        for batch in export.revocations.chunked(Self.importBatch) {
            report.revocations += try connection.query(
                """
                INSERT INTO revocations (transaction_id, original_transaction_id, revoked_at_ms, reason, restored_at_ms,
                    restored_by)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[])
                ON CONFLICT (transaction_id) DO NOTHING
                """,
                [.textArray(batch.map(\.transactionID)), .textArray(batch.map(\.originalTransactionID)),
                 .integerArray(batch.map(\.revokedAtMS)), .textArray(batch.map(\.reason)),
                 .integerArray(batch.map(\.restoredAtMS)), .optionalTextArray(batch.map(\.restoredBy))]).affectedRows
        }
        for batch in export.notifications.chunked(Self.importBatch) {
            report.notifications += try connection.query(
                """
                INSERT INTO processed_notifications (id, type, received_ms)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT (id) DO NOTHING
                """,
                [.textArray(batch.map(\.id)), .textArray(batch.map(\.type)), .integerArray(batch.map(\.receivedMS))]).affectedRows
        }
        let alreadyBound = Set(try connection.query(
            "SELECT DISTINCT original_transaction_id FROM account_bindings WHERE original_transaction_id = ANY($1::text[])",
            [.textArray(Set(export.bindings.map(\.originalTransactionID)))]).rows.compactMap { $0[0] })
        for batch in export.bindings.filter({ !alreadyBound.contains($0.originalTransactionID) }).chunked(Self.importBatch) {
            report.bindings += try connection.query(
                """
                INSERT INTO account_bindings (original_transaction_id, account, bound_at_ms)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT DO NOTHING
                """,
                [.textArray(batch.map(\.originalTransactionID)), .textArray(batch.map(\.account)),
                 .integerArray(batch.map(\.boundAtMS))]).affectedRows
        }
        for setting in export.settings where setting.name != "copied_from_sqlite" {
            report.settings += try connection.query(
                "INSERT INTO ledger_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                [.text(setting.name), .bytes(setting.value)]).affectedRows
        }
        (report.deliveries, report.outbox) = try importRecords(export)
        try connection.query(
            """
            INSERT INTO ledger_settings (name, value) VALUES ('copied_from_sqlite', $1)
            ON CONFLICT (name) DO UPDATE SET value = excluded.value
            """, [.bytes(Array(source.utf8))])
        try markChanged(originals, notify: true)
        return report
    }
}

extension Array {
    /// The array cut into consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
