import Foundation

/// The live version last recorded per pack (table `live_versions`) on PostgreSQL, and the `pack.published`
/// entries its changes queue, in one pooled transaction. The rows are read `FOR UPDATE`, so of instances seeing
/// the same change at once the first to commit records and announces it and the others find it recorded.
struct PostgresLiveVersions {
    let connection: PostgresConnection

    /// See `Ledger.reconcileLiveVersions(_:previous:now:announce:)`.
    func reconcile(_ live: [String: Int], previous: [String: Int]?, now: Date,
                   announce: LiveVersionEvents) throws(PostgresError) -> [LiveVersionChange] {
        var recorded: [String: (version: Int, announcements: Int)] = [:]
        for row in try connection.query("SELECT pack, version, announcements FROM live_versions ORDER BY pack FOR UPDATE").rows {
            recorded[row[0] ?? ""] = (Int(row[1] ?? "") ?? 0, Int(row[2] ?? "") ?? 0)
        }
        let nowMS = LedgerTime.milliseconds(now)
        guard let changes = LiveVersionChange.changes(live: live, previous: previous, recorded: recorded) else {
            let packs = live.keys.sorted()
            try connection.query(
                """
                INSERT INTO live_versions (pack, version, announcements, changed_ms)
                SELECT p, v, 0, $3::int8 FROM unnest($1::text[], $2::bigint[]::integer[]) AS l(p, v) ORDER BY p
                ON CONFLICT (pack) DO NOTHING
                """, [.textArray(packs), .integerArray(packs.map { live[$0].map(Int64.init) }), .integer(nowMS)])
            return []
        }
        var entries: [OutboxEntry] = []
        var made: [LiveVersionChange] = []
        for change in changes {
            // A pack another instance added meanwhile (after this read) is left to it.
            let written = try connection.query(
                """
                INSERT INTO live_versions (pack, version, announcements, changed_ms) VALUES ($1, $2::int4, $3::int4, $4)
                ON CONFLICT (pack) DO UPDATE SET version = excluded.version, announcements = excluded.announcements,
                    changed_ms = excluded.changed_ms
                WHERE live_versions.announcements = $3::int4 - 1
                """, [.text(change.pack), .integer(Int64(change.version)), .integer(Int64(change.announcement)), .integer(nowMS)]).affectedRows
            guard written == 1 else { continue }
            made.append(change)
            if let entry = announce(change) { entries.append(entry) }
        }
        try PostgresOutbox(connection: connection).insert(entries)
        return made
    }
}
