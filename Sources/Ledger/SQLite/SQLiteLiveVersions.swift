import Foundation

/// The live version last recorded per pack (table `live_versions`) on SQLite, and the `pack.published` entries
/// its changes queue, in one `BEGIN IMMEDIATE … COMMIT`.
struct SQLiteLiveVersions {
    let database: SQLiteDatabase

    /// See `Ledger.reconcileLiveVersions(_:previous:now:announce:)`.
    func reconcile(_ live: [String: Int], previous: [String: Int]?, now: Date,
                   announce: LiveVersionEvents) throws(SQLiteError) -> [LiveVersionChange] {
        try database.transaction { () throws(SQLiteError) -> [LiveVersionChange] in
            var recorded: [String: (version: Int, announcements: Int)] = [:]
            for row in try database.query("SELECT pack, version, announcements FROM live_versions") {
                recorded[row[0].text ?? ""] = (Int(row[1].integer ?? 0), Int(row[2].integer ?? 0))
            }
            let nowMS = LedgerTime.milliseconds(now)
            guard let changes = LiveVersionChange.changes(live: live, previous: previous, recorded: recorded) else {
                for (pack, version) in live {
                    try database.run(
                        "INSERT INTO live_versions (pack, version, announcements, changed_ms) VALUES (?, ?, 0, ?) ON CONFLICT (pack) DO NOTHING",
                        [.text(pack), .integer(Int64(version)), .integer(nowMS)])
                }
                return []
            }
            let outbox = SQLiteOutbox(database: database)
            for change in changes {
                try database.run(
                    """
                    INSERT INTO live_versions (pack, version, announcements, changed_ms) VALUES (?, ?, ?, ?)
                    ON CONFLICT (pack) DO UPDATE SET version = excluded.version, announcements = excluded.announcements,
                        changed_ms = excluded.changed_ms
                    """, [.text(change.pack), .integer(Int64(change.version)), .integer(Int64(change.announcement)), .integer(nowMS)])
                if let entry = announce(change) { try outbox.insert(entry) }
            }
            return changes
        }
    }
}
