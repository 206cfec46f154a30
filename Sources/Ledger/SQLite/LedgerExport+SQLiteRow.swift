extension LedgerExport.Transaction {
    /// The `transactions` columns that `init(sqliteRow:)` reads, in its order.
    static let sqliteColumns = """
        transaction_id, original_transaction_id, product_id, environment, purchase_date_ms, expires_date_ms,
            revocation_date_ms, source, first_seen_ms, updated_ms
        """

    /// A transaction from a row of `sqliteColumns`.
    init(sqliteRow row: [SQLiteValue]) {
        self.init(transactionID: row[0].text ?? "", originalTransactionID: row[1].text ?? "", productID: row[2].text ?? "",
                  environment: row[3].text ?? "", purchaseDateMS: row[4].integer ?? 0, expiresDateMS: row[5].integer,
                  revocationDateMS: row[6].integer, source: row[7].text ?? "receipt", firstSeenMS: row[8].integer ?? 0,
                  updatedMS: row[9].integer ?? 0)
    }
}
