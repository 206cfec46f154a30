/// A pack whose live version the ledger's `live_versions` table moved to a new version: a `pack.published` to
/// announce (spec app-store-server-api §8). `announcement` counts the pack's announcements (1 for its first), so
/// a version live again after a rollback is a new announcement with its own outbox key.
public struct LiveVersionChange: Sendable, Equatable {
    /// The pack ID.
    public var pack: String
    /// The version now live.
    public var version: Int
    /// The pack's announcement number (1, 2, …).
    public var announcement: Int

    /// A change; see the properties.
    public init(pack: String, version: Int, announcement: Int) {
        self.pack = pack
        self.version = version
        self.announcement = announcement
    }
}

/// Turns a live-version change into the outbox entry that announces it (queued in the transaction that records
/// the change), or nil for none.
public typealias LiveVersionEvents = @Sendable (LiveVersionChange) -> OutboxEntry?

extension LiveVersionChange {
    /// What `Ledger.reconcileLiveVersions` does with the live versions a server sees, given the table's rows
    /// (`recorded`, read under the write lock): nil when the table is empty at a start (`previous` nil), where
    /// everything is recorded without an announcement (a first start, or a ledger from before the table);
    /// otherwise the changes to record and announce. A pack the table does not hold is new; a pack whose row
    /// differs is changed, unless this instance knew the pack at another version than the row's (`previous`):
    /// then another instance moved the row while this one lagged, and its view is not news.
    static func changes(live: [String: Int], previous: [String: Int]?,
                        recorded: [String: (version: Int, announcements: Int)]) -> [LiveVersionChange]? {
        if previous == nil && recorded.isEmpty { return nil }
        var changes: [LiveVersionChange] = []
        for (pack, version) in live.sorted(by: { $0.key < $1.key }) {
            guard let row = recorded[pack] else {
                changes.append(LiveVersionChange(pack: pack, version: version, announcement: 1))
                continue
            }
            guard row.version != version else { continue }
            if let previous, previous[pack] != row.version { continue }
            changes.append(LiveVersionChange(pack: pack, version: version, announcement: row.announcements + 1))
        }
        return changes
    }
}
