public import Foundation

/// How changes committed by other instances reach this instance's access index (PostgreSQL's change feed),
/// for tests and `/metrics`. A SQLite ledger has one writer, so every count stays 0.
public struct LedgerPropagation: Sendable, Equatable {
    /// Polls of the change feed that completed.
    public var polls: Int = 0
    /// Polls that failed (connection lost, server down).
    public var failedPolls: Int = 0
    /// `NOTIFY` messages received (each triggers a poll at once).
    public var notifications: Int = 0
    /// Original transactions whose access state the feed re-read because some instance changed them.
    public var refreshedOriginals: Int = 0
    /// Full reloads of the index: one at open and one after every reconnection.
    public var resyncs: Int = 0
    /// Times the feed's connection was re-established after it was lost.
    public var reconnects: Int = 0
    /// When the index was last known to hold every committed change.
    public var lastConfirmed: Date

    /// Creates a report.
    public init(lastConfirmed: Date) {
        self.lastConfirmed = lastConfirmed
    }
}
