import Foundation

/// The SQL of the notification catch-up windows (table `notification_sync_windows`) on PostgreSQL, run in a
/// pooled `READ COMMITTED` transaction. The claim is one conditional `UPDATE`: of instances claiming at once,
/// the row lock makes the later ones see the winner's claim and take nothing. Every operation may run again
/// after a lost connection with the same result.
struct PostgresNotificationSyncWindows {
    let connection: PostgresConnection

    /// See `SQLiteNotificationSyncWindows.claim`.
    func claim(environment: String, owner: String, now: Date, lease: Double) throws(PostgresError) -> NotificationSyncClaim {
        let nowMS = LedgerTime.milliseconds(now)
        try connection.query("INSERT INTO notification_sync_windows (environment) VALUES ($1) ON CONFLICT (environment) DO NOTHING",
                             [.text(environment)])
        let claimed = try connection.query(
            """
            UPDATE notification_sync_windows SET claimed_by = $2, claim_expires_ms = $3
            WHERE environment = $1 AND (claimed_by IS NULL OR claimed_by = $2 OR claim_expires_ms <= $4)
            RETURNING synced_through_ms
            """,
            [.text(environment), .text(owner), .integer(nowMS + Int64(lease * 1000)), .integer(nowMS)])
        if let row = claimed.rows.first {
            return .claimed(syncedThrough: row.first.flatMap { $0 }.flatMap { Int64($0) }.map(LedgerTime.date))
        }
        let expires = try connection.query("SELECT claim_expires_ms FROM notification_sync_windows WHERE environment = $1",
                                           [.text(environment)]).scalar.flatMap { Int64($0) }
        return .held(until: LedgerTime.date(expires ?? nowMS))
    }

    /// See `SQLiteNotificationSyncWindows.complete`.
    func complete(environment: String, owner: String, through end: Date) throws(PostgresError) -> Bool {
        let endMS = LedgerTime.milliseconds(end)
        return try connection.query(
            """
            UPDATE notification_sync_windows
            SET synced_through_ms = GREATEST(COALESCE(synced_through_ms, 0), $3), claimed_by = NULL, claim_expires_ms = NULL
            WHERE environment = $1 AND (claimed_by = $2 OR (claimed_by IS NULL AND synced_through_ms >= $3))
            """,
            [.text(environment), .text(owner), .integer(endMS)]).affectedRows == 1
    }

    /// See `SQLiteNotificationSyncWindows.release`.
    func release(environment: String, owner: String) throws(PostgresError) {
        try connection.query(
            "UPDATE notification_sync_windows SET claimed_by = NULL, claim_expires_ms = NULL WHERE environment = $1 AND claimed_by = $2",
            [.text(environment), .text(owner)])
    }
}
