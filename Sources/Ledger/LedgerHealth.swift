public import Foundation

/// Whether the ledger can be reached now, and how current the in-memory access state is
/// (scale-out §3: the server serves downloads from the last confirmed state for `--ledger-stale-max`).
public struct LedgerHealth: Sendable, Equatable {
    /// Whether the backend answers now (SQLite: the file is open; PostgreSQL: the change feed's connection
    /// is up and its last poll succeeded recently).
    public var up: Bool
    /// `sqlite` or `postgres`.
    public var backend: LedgerBackend
    /// When the access index was last known to hold every committed change (SQLite: always now; PostgreSQL:
    /// when the last successful poll of the change feed started).
    public var lastConfirmed: Date

    /// Creates a health report.
    public init(up: Bool, backend: LedgerBackend, lastConfirmed: Date) {
        self.up = up
        self.backend = backend
        self.lastConfirmed = lastConfirmed
    }
}
