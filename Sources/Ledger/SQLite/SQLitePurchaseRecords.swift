/// The SQLite reads behind the support view (`Ledger.purchase(transactionID:)`, `Ledger.purchases(account:…)`),
/// run on the ledger's queue inside one read transaction, so a page is one consistent state.
struct SQLitePurchaseRecords {
    let database: SQLiteDatabase

    /// The rows of the purchase `transactionID` belongs to, or `nil`.
    func rows(transactionID: String) throws(SQLiteError) -> PurchaseRows? {
        try reading { () throws(SQLiteError) -> PurchaseRows? in
            var original = try database.query(
                "SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", [.text(transactionID)]).first?.first?.text
            if original == nil {
                original = try database.query(
                    "SELECT original_transaction_id FROM transactions WHERE original_transaction_id = ? LIMIT 1", [.text(transactionID)]
                ).first?.first?.text
            }
            guard let original,
                  let purchased = try database.query(
                      "SELECT MIN(purchase_date_ms) FROM transactions WHERE original_transaction_id = ?", [.text(original)]
                  ).first?.first?.integer else { return nil }
            return try details(PurchaseRows(originals: [.init(id: original, purchasedMS: purchased)]))
        }
    }

    /// The rows of up to `limit` purchases bound to `account` after `after`, newest first.
    func rows(account: String, after: PurchaseCursor?, limit: Int) throws(SQLiteError) -> PurchaseRows {
        try reading { () throws(SQLiteError) -> PurchaseRows in
            let found = try database.query(
                """
                SELECT b.original_transaction_id, MIN(t.purchase_date_ms) AS purchased
                FROM account_bindings b JOIN transactions t ON t.original_transaction_id = b.original_transaction_id
                WHERE b.account = ?1
                GROUP BY b.original_transaction_id
                HAVING ?2 IS NULL OR purchased < ?2 OR (purchased = ?2 AND b.original_transaction_id < ?3)
                ORDER BY purchased DESC, b.original_transaction_id DESC
                LIMIT ?4
                """,
                [.text(account), after.map { .integer($0.purchasedMS) } ?? .null, after.map { .text($0.originalTransactionID) } ?? .null,
                 .integer(Int64(limit + 1))])
            var rows = PurchaseRows()
            for row in found.prefix(limit) {
                guard let id = row[0].text, let purchased = row[1].integer else { continue }
                rows.originals.append(.init(id: id, purchasedMS: purchased))
            }
            rows.more = found.count > limit
            return try details(rows)
        }
    }

    /// `rows` with the transactions, bindings, revocations, delivery record and consumption answers of its
    /// originals: six statements, however many originals (each reads the originals' list from one parameter).
    private func details(_ rows: PurchaseRows) throws(SQLiteError) -> PurchaseRows {
        var rows = rows
        guard !rows.originals.isEmpty else { return rows }
        let originals = rows.originals.map(\.id)
        let ids = SQLiteValue.textList(originals)
        rows.transactions = try database.query(
            "SELECT \(LedgerExport.Transaction.sqliteColumns) FROM transactions WHERE original_transaction_id IN (SELECT value FROM json_each(?))",
            [ids]
        ).map(LedgerExport.Transaction.init(sqliteRow:))
        rows.bindings = try database.query(
            """
            SELECT original_transaction_id, account, bound_at_ms FROM account_bindings
            WHERE original_transaction_id IN (SELECT value FROM json_each(?))
            """, [ids]
        ).map { LedgerExport.Binding(originalTransactionID: $0[0].text ?? "", account: $0[1].text ?? "", boundAtMS: $0[2].integer ?? 0) }
        rows.revocations = try database.query(
            """
            SELECT transaction_id, original_transaction_id, revoked_at_ms, reason, restored_at_ms, restored_by FROM revocations
            WHERE original_transaction_id IN (SELECT value FROM json_each(?))
            """, [ids]
        ).map { row in
            LedgerExport.Revocation(
                transactionID: row[0].text ?? "", originalTransactionID: row[1].text ?? "", revokedAtMS: row[2].integer ?? 0,
                reason: row[3].text ?? "", restoredAtMS: row[4].integer, restoredBy: row[5].text)
        }
        rows.deliveries = try SQLiteDeliveryRecords(database: database).deliveries(of: originals)
        rows.consumptionItems = try SQLiteOutbox(database: database).items(queue: .consumption, orderingKeys: originals)
        return rows
    }

    /// Runs `body` in a read transaction.
    private func reading<Value>(_ body: () throws(SQLiteError) -> Value) throws(SQLiteError) -> Value {
        try database.execute("BEGIN")
        do {
            let value = try body()
            try database.execute("COMMIT")
            return value
        } catch {
            if database.inTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }
}
