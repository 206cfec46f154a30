import Foundation

/// The SQL of the notification catch-up windows (table `notification_sync_windows`), run on the ledger's
/// queue against its one connection; each operation is one `BEGIN IMMEDIATE … COMMIT`.
struct SQLiteNotificationSyncWindows {
    let database: SQLiteDatabase

    /// Takes the window of `environment` for `owner` for `lease` seconds, unless another owner holds an
    /// unexpired claim. Claiming again as the same owner renews the claim.
    func claim(environment: String, owner: String, now: Date, lease: Double) throws(SQLiteError) -> NotificationSyncClaim {
        let nowMS = LedgerTime.milliseconds(now)
        return try database.transaction { () throws(SQLiteError) -> NotificationSyncClaim in
            try database.run("INSERT INTO notification_sync_windows (environment) VALUES (?) ON CONFLICT (environment) DO NOTHING",
                             [.text(environment)])
            let row = try database.query(
                "SELECT synced_through_ms, claimed_by, claim_expires_ms FROM notification_sync_windows WHERE environment = ?",
                [.text(environment)]).first ?? []
            let syncedThrough = row.first?.integer
            let holder = row.count > 1 ? row[1].text : nil
            let expires = row.count > 2 ? row[2].integer : nil
            if let holder, holder != owner, let expires, expires > nowMS {
                return .held(until: LedgerTime.date(expires))
            }
            try database.run("UPDATE notification_sync_windows SET claimed_by = ?, claim_expires_ms = ? WHERE environment = ?",
                             [.text(owner), .integer(nowMS + Int64(lease * 1000)), .text(environment)])
            return .claimed(syncedThrough: syncedThrough.map(LedgerTime.date))
        }
    }

    /// Moves the window's start to `end` (never backwards) and drops `owner`'s claim; false when `owner` no
    /// longer holds it (the lease lapsed and another instance took it). Completing again is true.
    func complete(environment: String, owner: String, through end: Date) throws(SQLiteError) -> Bool {
        try database.transaction { () throws(SQLiteError) -> Bool in
            try database.run(
                """
                UPDATE notification_sync_windows
                SET synced_through_ms = MAX(COALESCE(synced_through_ms, 0), ?1), claimed_by = NULL, claim_expires_ms = NULL
                WHERE environment = ?2 AND (claimed_by = ?3 OR (claimed_by IS NULL AND synced_through_ms >= ?1))
                """,
                [.integer(LedgerTime.milliseconds(end)), .text(environment), .text(owner)]) == 1
        }
    }

    /// Drops `owner`'s claim without moving the window (a failed sync).
    func release(environment: String, owner: String) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            _ = try database.run(
                "UPDATE notification_sync_windows SET claimed_by = NULL, claim_expires_ms = NULL WHERE environment = ? AND claimed_by = ?",
                [.text(environment), .text(owner)])
        }
    }
}
