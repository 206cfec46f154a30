import Foundation

/// The PostgreSQL ledger's writes and reads, run on one pooled connection inside the transaction the pool
/// opened (`READ COMMITTED`).
///
/// Every write first locks the `original_transactions` rows of the originals it touches (created if new,
/// locked by `INSERT … ON CONFLICT DO UPDATE` in byte order, so two writers never wait on each other in a
/// cycle), then reads and changes bindings and revocations: under `first` exactly one of two concurrent
/// writers binds, under `transfer` the last to commit wins. Originals whose access state may have changed get
/// their `changed_xid` set to this transaction, taking effect at commit; the writer's change feed then reads
/// them and tells the other instances' feeds (`PostgresChangeFeed`: the write itself sends no `NOTIFY`).
package struct PostgresLedgerStore {
    /// The `LISTEN`/`NOTIFY` channel of the change feed.
    package static let channel = "depot_ledger"

    let connection: PostgresConnection

    // MARK: - Writes

    /// The decisions of `record` when it would change nothing (every purchase on file as given, every
    /// binding already as the policy leaves it), read in one statement without a lock; `nil` when something
    /// must be written. A sighting of known data, the common case, then costs no lock, no WAL and no commit
    /// flush; its answer is that of the snapshot it read, as if the write had run at that instant.
    func unchangedDecisions(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy
    ) throws(PostgresError) -> [String: BindingDecision]? {
        guard !purchases.isEmpty, Set(purchases.map(\.transactionID)).count == purchases.count else { return nil }
        let originals = Set(purchases.map(\.originalTransactionID))
        let rows = try connection.query(
            """
            SELECT 'matching', count(*)::text FROM transactions t
            JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[])
                AS p(id, original, product, environment, purchased, expires, revoked, source)
              ON t.transaction_id = p.id AND t.original_transaction_id = p.original AND t.product_id = p.product
             AND t.environment = p.environment AND t.purchase_date_ms = p.purchased
             AND t.expires_date_ms IS NOT DISTINCT FROM p.expires AND t.source = p.source
             AND (p.revoked IS NULL OR t.revocation_date_ms = p.revoked)
            UNION ALL
            SELECT original_transaction_id, account FROM account_bindings
            WHERE $9::text IS NOT NULL AND original_transaction_id = ANY($10::text[])
            """,
            [.textArray(purchases.map(\.transactionID)), .textArray(purchases.map(\.originalTransactionID)),
             .textArray(purchases.map(\.productID)), .textArray(purchases.map(\.environment)),
             .integerArray(purchases.map { LedgerTime.milliseconds($0.purchaseDate) }),
             .integerArray(purchases.map { $0.expiresDate.map(LedgerTime.milliseconds) }),
             .integerArray(purchases.map { $0.revocationDate.map(LedgerTime.milliseconds) }),
             .textArray(purchases.map(\.source.rawValue)), account.map { .text($0) } ?? .null, .textArray(originals)])
        var bound: [String: Set<String>] = [:]
        var matching = 0
        for row in rows.rows {
            if row[0] == "matching" { matching = Int(row[1] ?? "") ?? 0; continue }
            if let original = row[0], let holder = row[1] { bound[original, default: []].insert(holder) }
        }
        guard matching == purchases.count else { return nil }
        var decisions: [String: BindingDecision] = [:]
        for original in originals {
            guard let account else {
                decisions[original] = .granted
                continue
            }
            let holders = bound[original] ?? []
            switch policy {
            case .first where !holders.isEmpty && !holders.contains(account): decisions[original] = .boundToOtherAccount
            case .transfer where holders == [account], .first where holders.contains(account),
                 .shared where holders.contains(account):
                decisions[original] = .granted
            default:
                return nil
            }
        }
        return decisions
    }

    /// Upserts `purchases`, binds their originals to `account` per `policy`; returns the decisions and the
    /// originals whose access state may have changed.
    func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date, events: AccessEvents? = nil
    ) throws(PostgresError) -> (decisions: [String: BindingDecision], changed: Set<String>) {
        let nowMS = LedgerTime.milliseconds(now)
        var originals: [String] = []
        for purchase in purchases where !originals.contains(purchase.originalTransactionID) {
            originals.append(purchase.originalTransactionID)
        }
        try lock(originals)
        var changed: Set<String> = []
        for purchase in purchases {
            if try upsert(purchase, nowMS: nowMS) { changed.insert(purchase.originalTransactionID) }
        }
        var decisions: [String: BindingDecision] = [:]
        for original in originals {
            guard let account else {
                decisions[original] = .granted
                continue
            }
            let (decision, rebound) = try bind(original, to: account, policy: policy, nowMS: nowMS)
            decisions[original] = decision
            if rebound { changed.insert(original) }
        }
        // A purchase of an original with a revocation in force may lift it (a renewal bought after a refund).
        let revoked = try connection.query(
            """
            SELECT DISTINCT original_transaction_id FROM revocations
            WHERE restored_at_ms IS NULL AND original_transaction_id = ANY($1::text[])
            """, [.textArray(originals)])
        let inForce = Set(revoked.rows.compactMap { $0[0] })
        changed.formUnion(inForce)
        if let events {
            let entries = AccessChange.grants(purchases, decisions: decisions, account: account, now: now,
                                              revoked: { inForce.contains($0) }).compactMap(events)
            try PostgresOutbox(connection: connection).insert(entries)
        }
        try markChanged(changed)
        return (decisions, changed)
    }

    /// Applies a notification once: `nil` when `notificationID` was processed before (nothing changed),
    /// otherwise the originals whose access state changed.
    ///
    /// Round trips (`PostgresWriteCostTests`): the notification's row, the lock and change mark of its
    /// originals, then one statement for all its revocations and one for all its restorations (each also
    /// answering the product the events name: the transaction's, else its original transaction's when that
    /// transaction was never recorded), the outbox when there are events; plus `BEGIN` and `COMMIT`.
    func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], by: String = "apple", now: Date,
        events: AccessEvents? = nil
    ) throws(PostgresError) -> Set<String>? {
        let nowMS = LedgerTime.milliseconds(now)
        // Two instances inserting the same ID at once: the second waits for the first to commit, then finds it.
        let inserted = try connection.query(
            "INSERT INTO processed_notifications (id, type, received_ms) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
            [.text(notificationID), .text(type), .integer(nowMS)])
        guard inserted.affectedRows == 1 else { return nil }
        let restored = restore.isEmpty ? [] : try connection.query(
            "SELECT original_transaction_id FROM revocations WHERE transaction_id = ANY($1::text[])",
            [.textArray(restore)]).rows.compactMap { $0[0] }
        let originals = Set(revoke.map(\.originalTransactionID) + restored)
        try lock(Array(originals), markingChanged: true)
        var entries: [OutboxEntry] = []
        // A transaction named twice: the last revocation of it is the one that stays (as applying them in turn).
        var last: [String: Int] = [:]
        for (position, revocation) in revoke.enumerated() { last[revocation.transactionID] = position }
        let revocations = revoke.enumerated().filter { last[$0.element.transactionID] == $0.offset }.map(\.element)
        if !revocations.isEmpty {
            let products = try connection.query(
                """
                WITH given AS (
                    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS g(id, original, revoked_ms, reason)),
                revoked AS (
                    INSERT INTO revocations (transaction_id, original_transaction_id, revoked_at_ms, reason, restored_at_ms)
                    SELECT id, original, revoked_ms, reason, NULL FROM given
                    ON CONFLICT (transaction_id) DO UPDATE SET original_transaction_id = excluded.original_transaction_id,
                        revoked_at_ms = excluded.revoked_at_ms, reason = excluded.reason, restored_at_ms = NULL),
                updated AS (
                    UPDATE transactions t SET revocation_date_ms = g.revoked_ms, updated_ms = $5
                    FROM given g WHERE t.transaction_id = g.id
                    RETURNING t.transaction_id, t.product_id)
                SELECT g.id, COALESCE(u.product_id, o.product_id) FROM given g
                LEFT JOIN updated u ON u.transaction_id = g.id
                LEFT JOIN transactions o ON o.transaction_id = g.original
                """,
                [.textArray(revocations.map(\.transactionID)), .textArray(revocations.map(\.originalTransactionID)),
                 .integerArray(revocations.map { LedgerTime.milliseconds($0.revokedAt) }), .textArray(revocations.map(\.reason)),
                 .integer(nowMS)]).pairs
            if let events {
                entries += revoke.compactMap { revocation in
                    events(AccessChange(
                        kind: .revoked, originalTransactionID: revocation.originalTransactionID, transactionID: revocation.transactionID,
                        productID: products[revocation.transactionID] ?? nil, account: nil, by: by, reason: revocation.reason,
                        cause: notificationID, at: revocation.revokedAt))
                }
            }
        }
        if !restore.isEmpty {
            // Lifted: (transaction, original, product) of each revocation in force that this notification restores.
            let lifted = try connection.query(
                """
                WITH lifted AS (
                    UPDATE revocations SET restored_at_ms = $1, restored_by = $3
                    WHERE transaction_id = ANY($2::text[]) AND restored_at_ms IS NULL
                    RETURNING transaction_id, original_transaction_id),
                cleared AS (
                    UPDATE transactions SET revocation_date_ms = NULL, updated_ms = $1 WHERE transaction_id = ANY($2::text[])
                    RETURNING transaction_id, product_id)
                SELECT l.transaction_id, l.original_transaction_id, COALESCE(c.product_id, o.product_id)
                FROM lifted l LEFT JOIN cleared c USING (transaction_id)
                LEFT JOIN transactions o ON o.transaction_id = l.original_transaction_id
                """, [.integer(nowMS), .textArray(restore), .text(by)]).rows
            if let events {
                var announced: Set<String> = []
                for transactionID in restore where !announced.contains(transactionID) {
                    guard let row = lifted.first(where: { $0[0] == transactionID }), let original = row[1] else { continue }
                    announced.insert(transactionID)
                    if let entry = events(AccessChange(
                        kind: .restored, originalTransactionID: original, transactionID: transactionID, productID: row[2],
                        account: nil, by: by, reason: type, cause: notificationID, at: now)) {
                        entries.append(entry)
                    }
                }
            }
        }
        try PostgresOutbox(connection: connection).insert(entries)
        return originals
    }

    /// The download-token key: the stored one, or `generate()`'s if none is stored yet. Statements in
    /// autocommit: of two instances inserting at once, the second's insert waits and does nothing, and both
    /// then read the first's key.
    func tokenKey(generate: () -> [UInt8]) throws(PostgresError) -> [UInt8] {
        let select = "SELECT value FROM ledger_settings WHERE name = 'token_key'"
        if let stored = try connection.query(select).scalar.flatMap(PostgresRows.bytes(fromHex:)) { return stored }
        try connection.query(
            "INSERT INTO ledger_settings (name, value) VALUES ('token_key', $1) ON CONFLICT (name) DO NOTHING",
            [.bytes(generate())])
        guard let stored = try connection.query(select).scalar.flatMap(PostgresRows.bytes(fromHex:)) else {
            throw PostgresError(message: "the token key vanished after it was stored")
        }
        return stored
    }

    // MARK: - Reads

    /// The purchases of one original transaction, oldest first, with the revocation in force (if any).
    func purchases(originalTransactionID: String) throws(PostgresError) -> [LedgerPurchase] {
        try connection.query(
            """
            SELECT t.transaction_id, t.original_transaction_id, t.product_id, t.environment, t.purchase_date_ms,
                t.expires_date_ms, r.revoked_at_ms, t.source
            FROM transactions t
            LEFT JOIN revocations r ON r.transaction_id = t.transaction_id AND r.restored_at_ms IS NULL
            WHERE t.original_transaction_id = $1
            ORDER BY t.purchase_date_ms, t.transaction_id
            """,
            [.text(originalTransactionID)]
        ).rows.map { row in
            LedgerPurchase(
                transactionID: row[0] ?? "", originalTransactionID: row[1] ?? "", productID: row[2] ?? "",
                environment: row[3] ?? "", purchaseDate: LedgerTime.date(Int64(row[4] ?? "") ?? 0),
                expiresDate: row[5].flatMap { Int64($0) }.map(LedgerTime.date),
                revocationDate: row[6].flatMap { Int64($0) }.map(LedgerTime.date),
                source: LedgerPurchase.Source(rawValue: row[7] ?? "") ?? .receipt)
        }
    }

    // MARK: - Locking and change marks

    /// Creates the `original_transactions` rows of `originals` if needed and locks them, in byte order, in one
    /// statement: `ON CONFLICT DO UPDATE` locks a row that exists (or that a concurrent writer has just
    /// committed, which a later statement's snapshot would be needed to see otherwise), as `FOR UPDATE` would.
    /// Every writer locks this way, in one pass in one order, so two writers never wait on each other in a
    /// cycle. `markingChanged` also marks them changed by this transaction (for a write that changes every
    /// original it locks); otherwise a row keeps its mark.
    func lock(_ originals: [String], markingChanged: Bool = false) throws(PostgresError) {
        guard !originals.isEmpty else { return }
        let mark = markingChanged ? "pg_current_xact_id()" : "'0'::xid8"
        let kept = markingChanged ? "excluded.changed_xid" : "original_transactions.changed_xid"
        try connection.query(
            """
            INSERT INTO original_transactions (original_transaction_id, changed_xid)
            SELECT id, \(mark) FROM unnest($1::text[]) AS id ORDER BY id COLLATE "C"
            ON CONFLICT (original_transaction_id) DO UPDATE SET changed_xid = \(kept)
            """, [.textArray(Set(originals))])
    }

    /// Marks `originals` changed by this transaction (the change feeds find them by that mark once it commits).
    /// With `notify`, also sends the feeds a `NOTIFY` at commit: for a writer that is not a ledger with its own
    /// feed (`depot ledger copy`); a ledger's writes leave that to their feed (`PostgresChangeFeed`), since
    /// PostgreSQL serializes notifying commits.
    func markChanged(_ originals: Set<String>, notify: Bool = false) throws(PostgresError) {
        guard !originals.isEmpty else { return }
        try connection.query(
            "UPDATE original_transactions SET changed_xid = pg_current_xact_id() WHERE original_transaction_id = ANY($1::text[])",
            [.textArray(originals)])
        if notify { try connection.query("SELECT pg_notify($1, '')", [.text(Self.channel)]) }
    }

    // MARK: - Private

    /// Upserts one transaction; `true` when it carried a revocation date that was not on file yet.
    private func upsert(_ purchase: LedgerPurchase, nowMS: Int64) throws(PostgresError) -> Bool {
        let revocationMS = purchase.revocationDate.map(LedgerTime.milliseconds)
        try connection.query(
            """
            INSERT INTO transactions (transaction_id, original_transaction_id, product_id, environment,
                purchase_date_ms, expires_date_ms, revocation_date_ms, source, first_seen_ms, updated_ms)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
            ON CONFLICT (transaction_id) DO UPDATE SET
                original_transaction_id = excluded.original_transaction_id, product_id = excluded.product_id,
                environment = excluded.environment, purchase_date_ms = excluded.purchase_date_ms,
                expires_date_ms = excluded.expires_date_ms,
                revocation_date_ms = COALESCE(excluded.revocation_date_ms, transactions.revocation_date_ms),
                source = excluded.source, updated_ms = excluded.updated_ms
            WHERE (transactions.original_transaction_id, transactions.product_id, transactions.environment,
                   transactions.purchase_date_ms, transactions.expires_date_ms, transactions.source)
                IS DISTINCT FROM (excluded.original_transaction_id, excluded.product_id, excluded.environment,
                   excluded.purchase_date_ms, excluded.expires_date_ms, excluded.source)
                OR (excluded.revocation_date_ms IS NOT NULL
                    AND transactions.revocation_date_ms IS DISTINCT FROM excluded.revocation_date_ms)
            """,
            [.text(purchase.transactionID), .text(purchase.originalTransactionID), .text(purchase.productID),
             .text(purchase.environment), .integer(LedgerTime.milliseconds(purchase.purchaseDate)),
             .integer(purchase.expiresDate.map(LedgerTime.milliseconds)), .integer(revocationMS),
             .text(purchase.source.rawValue), .integer(nowMS)])
        guard let revocationMS else { return false }
        // A revocation already on file (in force or restored by REFUND_REVERSED) is newer knowledge than
        // purchase data that may come from a cached receipt: keep it.
        let inserted = try connection.query(
            """
            INSERT INTO revocations (transaction_id, original_transaction_id, revoked_at_ms, reason)
            VALUES ($1, $2, $3, $4) ON CONFLICT (transaction_id) DO NOTHING
            """,
            [.text(purchase.transactionID), .text(purchase.originalTransactionID), .integer(revocationMS),
             .text(purchase.source.rawValue)])
        return inserted.affectedRows == 1
    }

    /// Binds `original` to `account` per `policy` (its row is locked); whether the bindings changed.
    private func bind(
        _ original: String, to account: String, policy: AccountPolicy, nowMS: Int64
    ) throws(PostgresError) -> (BindingDecision, changed: Bool) {
        let bound = Set(try connection.query(
            "SELECT account FROM account_bindings WHERE original_transaction_id = $1", [.text(original)]
        ).rows.compactMap { $0[0] })
        var changed = false
        switch policy {
        case .first:
            if !bound.isEmpty && !bound.contains(account) { return (.boundToOtherAccount, false) }
        case .transfer:
            if bound.contains(where: { $0 != account }) {
                try connection.query(
                    "DELETE FROM account_bindings WHERE original_transaction_id = $1 AND account <> $2",
                    [.text(original), .text(account)])
                changed = true
            }
        case .shared:
            break
        }
        if !bound.contains(account) {
            try connection.query(
                "INSERT INTO account_bindings (original_transaction_id, account, bound_at_ms) VALUES ($1, $2, $3)",
                [.text(original), .text(account), .integer(nowMS)])
            changed = true
        }
        return (.granted, changed)
    }
}
