import Foundation

/// The SQLite ledger's SQL, run on the ledger's queue against its one connection.
///
/// Each public operation is one `BEGIN IMMEDIATE … COMMIT`; the access entries it returns are computed
/// inside that transaction, so they match exactly what was committed.
struct SQLiteLedgerStore {
    let database: SQLiteDatabase

    // MARK: - Writes

    /// Upserts `purchases`, binds their original transactions to `account` per `policy`, and returns the
    /// decisions and the new access entries of the originals touched.
    func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date, events: AccessEvents? = nil
    ) throws(SQLiteError) -> (decisions: [String: BindingDecision], entries: [String: AccessEntry]) {
        let nowMS = LedgerTime.milliseconds(now)
        return try database.transaction { () throws(SQLiteError) in
            var originals: [String] = []
            for purchase in purchases {
                if !originals.contains(purchase.originalTransactionID) { originals.append(purchase.originalTransactionID) }
                try upsert(purchase, nowMS: nowMS)
            }
            var decisions: [String: BindingDecision] = [:]
            for original in originals {
                if let account {
                    decisions[original] = try bind(original, to: account, policy: policy, nowMS: nowMS)
                } else {
                    decisions[original] = .granted
                }
            }
            let entries = try accessEntries(for: originals)
            if let events {
                let outbox = SQLiteOutbox(database: database)
                for change in AccessChange.grants(purchases, decisions: decisions, account: account, now: now,
                                                  revoked: { entries[$0]?.revoked == true }) {
                    if let entry = events(change) { try outbox.insert(entry) }
                }
            }
            return (decisions, entries)
        }
    }

    /// Applies a notification once; `nil` when `notificationID` was processed before (nothing changed).
    func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], by: String = "apple", now: Date,
        events: AccessEvents? = nil
    ) throws(SQLiteError) -> [String: AccessEntry]? {
        let nowMS = LedgerTime.milliseconds(now)
        return try database.transaction { () throws(SQLiteError) -> [String: AccessEntry]? in
            let inserted = try database.run(
                "INSERT INTO processed_notifications (id, type, received_ms) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
                [.text(notificationID), .text(type), .integer(nowMS)])
            guard inserted == 1 else { return nil }
            var originals: [String] = []
            for revocation in revoke {
                try database.run(
                    """
                    INSERT INTO revocations (transaction_id, original_transaction_id, revoked_at_ms, reason, restored_at_ms)
                    VALUES (?, ?, ?, ?, NULL)
                    ON CONFLICT (transaction_id) DO UPDATE SET original_transaction_id = excluded.original_transaction_id,
                        revoked_at_ms = excluded.revoked_at_ms, reason = excluded.reason, restored_at_ms = NULL
                    """,
                    [.text(revocation.transactionID), .text(revocation.originalTransactionID),
                     .integer(LedgerTime.milliseconds(revocation.revokedAt)), .text(revocation.reason)])
                try database.run(
                    "UPDATE transactions SET revocation_date_ms = ?, updated_ms = ? WHERE transaction_id = ?",
                    [.integer(LedgerTime.milliseconds(revocation.revokedAt)), .integer(nowMS), .text(revocation.transactionID)])
                originals.append(revocation.originalTransactionID)
                if let events, let entry = events(AccessChange(
                    kind: .revoked, originalTransactionID: revocation.originalTransactionID, transactionID: revocation.transactionID,
                    productID: try productID(of: revocation.transactionID, original: revocation.originalTransactionID),
                    account: nil, by: by, reason: revocation.reason, cause: notificationID, at: revocation.revokedAt)) {
                    try SQLiteOutbox(database: database).insert(entry)
                }
            }
            for transactionID in restore {
                let rows = try database.query(
                    "SELECT original_transaction_id FROM revocations WHERE transaction_id = ?", [.text(transactionID)])
                originals += rows.compactMap { $0[0].text }
                let lifted = try database.run(
                    "UPDATE revocations SET restored_at_ms = ?, restored_by = ? WHERE transaction_id = ? AND restored_at_ms IS NULL",
                    [.integer(nowMS), .text(by), .text(transactionID)])
                if lifted > 0, let events, let original = rows.first?[0].text, let entry = events(AccessChange(
                    kind: .restored, originalTransactionID: original, transactionID: transactionID,
                    productID: try productID(of: transactionID, original: original), account: nil, by: by, reason: type,
                    cause: notificationID, at: now)) {
                    try SQLiteOutbox(database: database).insert(entry)
                }
                try database.run(
                    "UPDATE transactions SET revocation_date_ms = NULL, updated_ms = ? WHERE transaction_id = ?",
                    [.integer(nowMS), .text(transactionID)])
            }
            return try accessEntries(for: originals)
        }
    }

    /// The product of a recorded transaction, else of its original transaction (a change naming no recorded
    /// transaction: a support revocation, a refund seen before its receipt); nil when neither was recorded.
    private func productID(of transactionID: String, original: String) throws(SQLiteError) -> String? {
        for id in [transactionID, original] {
            if let found = try database.query("SELECT product_id FROM transactions WHERE transaction_id = ?", [.text(id)]).first?[0].text { return found }
        }
        return nil
    }

    private func upsert(_ purchase: LedgerPurchase, nowMS: Int64) throws(SQLiteError) {
        let revocationMS = purchase.revocationDate.map(LedgerTime.milliseconds)
        try database.run(
            """
            INSERT INTO transactions (transaction_id, original_transaction_id, product_id, environment,
                purchase_date_ms, expires_date_ms, revocation_date_ms, source, first_seen_ms, updated_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (transaction_id) DO UPDATE SET
                original_transaction_id = excluded.original_transaction_id, product_id = excluded.product_id,
                environment = excluded.environment, purchase_date_ms = excluded.purchase_date_ms,
                expires_date_ms = excluded.expires_date_ms,
                revocation_date_ms = COALESCE(excluded.revocation_date_ms, revocation_date_ms),
                source = excluded.source, updated_ms = excluded.updated_ms
            WHERE original_transaction_id IS NOT excluded.original_transaction_id OR product_id IS NOT excluded.product_id
                OR environment IS NOT excluded.environment OR purchase_date_ms IS NOT excluded.purchase_date_ms
                OR expires_date_ms IS NOT excluded.expires_date_ms OR source IS NOT excluded.source
                OR (excluded.revocation_date_ms IS NOT NULL AND revocation_date_ms IS NOT excluded.revocation_date_ms)
            """,
            [.text(purchase.transactionID), .text(purchase.originalTransactionID), .text(purchase.productID),
             .text(purchase.environment), .integer(LedgerTime.milliseconds(purchase.purchaseDate)),
             purchase.expiresDate.map { .integer(LedgerTime.milliseconds($0)) } ?? .null,
             revocationMS.map { .integer($0) } ?? .null,
             .text(purchase.source.rawValue), .integer(nowMS), .integer(nowMS)])
        if let revocationMS {
            // A revocation already on file (in force or restored by REFUND_REVERSED) is newer knowledge
            // than purchase data that may come from a cached receipt: keep it.
            try database.run(
                """
                INSERT INTO revocations (transaction_id, original_transaction_id, revoked_at_ms, reason)
                VALUES (?, ?, ?, ?) ON CONFLICT (transaction_id) DO NOTHING
                """,
                [.text(purchase.transactionID), .text(purchase.originalTransactionID), .integer(revocationMS),
                 .text(purchase.source.rawValue)])
        }
    }

    private func bind(
        _ original: String, to account: String, policy: AccountPolicy, nowMS: Int64
    ) throws(SQLiteError) -> BindingDecision {
        let bound = Set(try database.query(
            "SELECT account FROM account_bindings WHERE original_transaction_id = ?", [.text(original)]
        ).compactMap { $0[0].text })
        switch policy {
        case .first:
            if !bound.isEmpty && !bound.contains(account) { return .boundToOtherAccount }
        case .transfer:
            if bound.contains(where: { $0 != account }) {
                try database.run(
                    "DELETE FROM account_bindings WHERE original_transaction_id = ? AND account <> ?",
                    [.text(original), .text(account)])
            }
        case .shared:
            break
        }
        if !bound.contains(account) {
            try database.run(
                "INSERT INTO account_bindings (original_transaction_id, account, bound_at_ms) VALUES (?, ?, ?)",
                [.text(original), .text(account), .integer(nowMS)])
        }
        return .granted
    }

    // MARK: - Reads

    /// The purchases of one original transaction, oldest first, with the revocation in force (if any).
    func purchases(originalTransactionID: String) throws(SQLiteError) -> [LedgerPurchase] {
        try database.query(
            """
            SELECT t.transaction_id, t.original_transaction_id, t.product_id, t.environment, t.purchase_date_ms,
                t.expires_date_ms, r.revoked_at_ms, t.source
            FROM transactions t
            LEFT JOIN revocations r ON r.transaction_id = t.transaction_id AND r.restored_at_ms IS NULL
            WHERE t.original_transaction_id = ?
            ORDER BY t.purchase_date_ms, t.transaction_id
            """,
            [.text(originalTransactionID)]
        ).map { row in
            LedgerPurchase(
                transactionID: row[0].text ?? "", originalTransactionID: row[1].text ?? "",
                productID: row[2].text ?? "", environment: row[3].text ?? "",
                purchaseDate: LedgerTime.date(row[4].integer ?? 0),
                expiresDate: row[5].integer.map(LedgerTime.date), revocationDate: row[6].integer.map(LedgerTime.date),
                source: LedgerPurchase.Source(rawValue: row[7].text ?? "") ?? .receipt)
        }
    }

    /// The access entries of every bound or revoked original transaction (to fill the index at open).
    func allAccessEntries() throws(SQLiteError) -> [String: AccessEntry] {
        try accessEntries(filter: nil)
    }

    /// The access entries of `originals` (default entries included, so the index can drop them).
    func accessEntries(for originals: [String]) throws(SQLiteError) -> [String: AccessEntry] {
        var entries: [String: AccessEntry] = [:]
        for original in Set(originals) {
            entries[original] = try accessEntries(filter: original)[original] ?? AccessEntry(accounts: [], revoked: false)
        }
        return entries
    }

    /// Revocation rule: an original transaction is revoked when some revocation in force is not followed by
    /// a later non-revoked transaction. A revocation's time is its transaction's purchase date, or the
    /// revocation date when that transaction was never seen. So a refunded latest transaction (or a refunded
    /// one-time purchase) cuts access off, while a refunded old renewal does not cut off a later renewal.
    private func accessEntries(filter original: String?) throws(SQLiteError) -> [String: AccessEntry] {
        let whereBindings = original == nil ? "" : "WHERE original_transaction_id = ?1"
        let andTransactions = original == nil ? "" : "AND t.original_transaction_id = ?1"
        let andRevocations = original == nil ? "" : "AND r.original_transaction_id = ?1"
        let parameters: [SQLiteValue] = original.map { [.text($0)] } ?? []

        var entries: [String: AccessEntry] = [:]
        for row in try database.query(
            "SELECT original_transaction_id, account FROM account_bindings \(whereBindings)", parameters) {
            guard let original = row[0].text, let account = row[1].text else { continue }
            entries[original, default: AccessEntry(accounts: [], revoked: false)].accounts.insert(account)
        }
        var latestRevoked: [String: Int64] = [:]
        for row in try database.query(
            """
            SELECT r.original_transaction_id, MAX(COALESCE(t.purchase_date_ms, r.revoked_at_ms))
            FROM revocations r LEFT JOIN transactions t ON t.transaction_id = r.transaction_id
            WHERE r.restored_at_ms IS NULL \(andRevocations)
            GROUP BY r.original_transaction_id
            """, parameters) {
            if let original = row[0].text, let time = row[1].integer { latestRevoked[original] = time }
        }
        guard !latestRevoked.isEmpty else { return entries }
        var latestActive: [String: Int64] = [:]
        for row in try database.query(
            """
            SELECT t.original_transaction_id, MAX(t.purchase_date_ms) FROM transactions t
            WHERE NOT EXISTS (SELECT 1 FROM revocations r
                              WHERE r.transaction_id = t.transaction_id AND r.restored_at_ms IS NULL)
            \(andTransactions)
            GROUP BY t.original_transaction_id
            """, parameters) {
            if let original = row[0].text, let time = row[1].integer { latestActive[original] = time }
        }
        for (original, revokedTime) in latestRevoked {
            let cutOff = latestActive[original].map { $0 <= revokedTime } ?? true
            if cutOff { entries[original, default: AccessEntry(accounts: [], revoked: false)].revoked = true }
        }
        return entries
    }

    // MARK: - Settings and export

    /// The download-token key: the stored one, or `generate()`'s, stored first (the write lock of
    /// `BEGIN IMMEDIATE` makes the read and the insert one step for every connection to the file).
    func tokenKey(generate: () -> [UInt8]) throws(SQLiteError) -> [UInt8] {
        try database.transaction { () throws(SQLiteError) -> [UInt8] in
            if let stored = try database.query(
                "SELECT value FROM ledger_settings WHERE name = 'token_key'").first?.first?.blob {
                return stored
            }
            let key = generate()
            try database.run("INSERT INTO ledger_settings (name, value) VALUES ('token_key', ?)", [.blob(key)])
            return key
        }
    }

    /// Every row, read in one read transaction (a consistent state even while a server writes the file).
    /// `schemaVersion` is the file's: `ledger_settings` exists from version 2.
    func export(schemaVersion: Int) throws(SQLiteError) -> LedgerExport {
        try database.execute("BEGIN")
        defer { try? database.execute("COMMIT") }
        var export = LedgerExport()
        export.transactions = try database.query(
            "SELECT \(LedgerExport.Transaction.sqliteColumns) FROM transactions ORDER BY transaction_id"
        ).map(LedgerExport.Transaction.init(sqliteRow:))
        export.bindings = try database.query(
            "SELECT original_transaction_id, account, bound_at_ms FROM account_bindings ORDER BY 1, 2"
        ).map { LedgerExport.Binding(originalTransactionID: $0[0].text ?? "", account: $0[1].text ?? "", boundAtMS: $0[2].integer ?? 0) }
        let restoredBy = schemaVersion >= 4 ? "restored_by" : "NULL"
        export.revocations = try database.query(
            "SELECT transaction_id, original_transaction_id, revoked_at_ms, reason, restored_at_ms, \(restoredBy) FROM revocations ORDER BY 1"
        ).map { row in
            LedgerExport.Revocation(
                transactionID: row[0].text ?? "", originalTransactionID: row[1].text ?? "", revokedAtMS: row[2].integer ?? 0,
                reason: row[3].text ?? "", restoredAtMS: row[4].integer, restoredBy: row[5].text)
        }
        export.notifications = try database.query(
            "SELECT id, type, received_ms FROM processed_notifications ORDER BY 1"
        ).map { LedgerExport.Notification(id: $0[0].text ?? "", type: $0[1].text ?? "", receivedMS: $0[2].integer ?? 0) }
        guard schemaVersion >= 2 else { return export }
        export.settings = try database.query("SELECT name, value FROM ledger_settings ORDER BY 1").map {
            LedgerExport.Setting(name: $0[0].text ?? "", value: $0[1].blob ?? [])
        }
        guard schemaVersion >= 4 else { return export }
        try SQLiteDeliveryRecords(database: database).export(into: &export, schemaVersion: schemaVersion)
        try SQLiteOutbox(database: database).export(into: &export)
        return export
    }
}
