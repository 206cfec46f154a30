/// The PostgreSQL reads behind the support view (`Ledger.purchase(transactionID:)`, `Ledger.purchases(account:…)`),
/// run on one pooled connection in a `REPEATABLE READ` transaction, so a page is one consistent snapshot.
struct PostgresPurchaseRecords {
    let connection: PostgresConnection

    /// The rows of the purchase `transactionID` belongs to, or `nil`.
    func rows(transactionID: String) throws(PostgresError) -> PurchaseRows? {
        let found = try connection.query(
            """
            SELECT original_transaction_id, MIN(purchase_date_ms)::text FROM transactions
            WHERE original_transaction_id = (
                SELECT original_transaction_id FROM transactions WHERE transaction_id = $1
                UNION ALL
                SELECT original_transaction_id FROM transactions WHERE original_transaction_id = $1
                LIMIT 1)
            GROUP BY original_transaction_id
            """, [.text(transactionID)])
        guard let row = found.rows.first, let original = row[0], let purchased = row[1].flatMap({ Int64($0) }) else { return nil }
        return try details(PurchaseRows(originals: [.init(id: original, purchasedMS: purchased)]))
    }

    /// The rows of up to `limit` purchases bound to `account` after `after`, newest first.
    func rows(account: String, after: PurchaseCursor?, limit: Int) throws(PostgresError) -> PurchaseRows {
        let found = try connection.query(
            """
            SELECT b.original_transaction_id, MIN(t.purchase_date_ms)::text AS purchased
            FROM account_bindings b JOIN transactions t ON t.original_transaction_id = b.original_transaction_id
            WHERE b.account = $1
            GROUP BY b.original_transaction_id
            HAVING $2::bigint IS NULL OR MIN(t.purchase_date_ms) < $2::bigint
                OR (MIN(t.purchase_date_ms) = $2::bigint AND b.original_transaction_id < $3::text)
            ORDER BY MIN(t.purchase_date_ms) DESC, b.original_transaction_id DESC
            LIMIT $4::int8
            """,
            [.text(account), .integer(after?.purchasedMS), after.map { .text($0.originalTransactionID) } ?? .null,
             .integer(Int64(limit + 1))])
        var rows = PurchaseRows()
        for row in found.rows.prefix(limit) {
            guard let id = row[0], let purchased = row[1].flatMap({ Int64($0) }) else { continue }
            rows.originals.append(.init(id: id, purchasedMS: purchased))
        }
        rows.more = found.rows.count > limit
        return try details(rows)
    }

    /// `rows` with the transactions, bindings, revocations, delivery record and consumption answers of its
    /// originals: six statements, however many originals.
    private func details(_ rows: PurchaseRows) throws(PostgresError) -> PurchaseRows {
        var rows = rows
        guard !rows.originals.isEmpty else { return rows }
        let originals = rows.originals.map(\.id)
        let ids = PostgresValue.textArray(originals)
        rows.transactions = try connection.query(
            """
            SELECT transaction_id, original_transaction_id, product_id, environment, purchase_date_ms, expires_date_ms,
                revocation_date_ms, source, first_seen_ms, updated_ms FROM transactions WHERE original_transaction_id = ANY($1::text[])
            """, [ids]
        ).rows.map { row in
            LedgerExport.Transaction(
                transactionID: row[0] ?? "", originalTransactionID: row[1] ?? "", productID: row[2] ?? "", environment: row[3] ?? "",
                purchaseDateMS: Self.integer(row[4]) ?? 0, expiresDateMS: Self.integer(row[5]), revocationDateMS: Self.integer(row[6]),
                source: row[7] ?? "receipt", firstSeenMS: Self.integer(row[8]) ?? 0, updatedMS: Self.integer(row[9]) ?? 0)
        }
        rows.bindings = try connection.query(
            "SELECT original_transaction_id, account, bound_at_ms FROM account_bindings WHERE original_transaction_id = ANY($1::text[])", [ids]
        ).rows.map { LedgerExport.Binding(originalTransactionID: $0[0] ?? "", account: $0[1] ?? "", boundAtMS: Self.integer($0[2]) ?? 0) }
        rows.revocations = try connection.query(
            """
            SELECT transaction_id, original_transaction_id, revoked_at_ms, reason, restored_at_ms, restored_by FROM revocations
            WHERE original_transaction_id = ANY($1::text[])
            """, [ids]
        ).rows.map { row in
            LedgerExport.Revocation(transactionID: row[0] ?? "", originalTransactionID: row[1] ?? "", revokedAtMS: Self.integer(row[2]) ?? 0,
                                    reason: row[3] ?? "", restoredAtMS: Self.integer(row[4]), restoredBy: row[5])
        }
        rows.deliveries = try PostgresDeliveryRecords(connection: connection).deliveries(of: originals)
        rows.consumptionItems = try PostgresOutbox(connection: connection).items(queue: .consumption, orderingKeys: originals)
        return rows
    }

    private static func integer(_ text: String?) -> Int64? { text.flatMap { Int64($0) } }
}
