public import Foundation

/// Whether the ledger can be reached now, and how current the in-memory access state is
/// (scale-out §3: the server serves downloads from the last confirmed state for `--ledger-stale-max`).
public struct LedgerHealth: Sendable, Equatable {
    /// Whether the backend answers now (SQLite: the file is open and can be written, `writeFailure` is `nil`;
    /// PostgreSQL: the change feed's connection is up and its last poll succeeded recently).
    public var up: Bool
    /// `sqlite` or `postgres`.
    public var backend: LedgerBackend
    /// When the access index was last known to hold every committed change (SQLite: always now; PostgreSQL:
    /// when the last successful poll of the change feed started).
    public var lastConfirmed: Date
    /// SQLite: what the write that failed for a storage reason (disk full, read-only, I/O error) said, while no
    /// write probe has committed since; `nil` while the file can be written, and for PostgreSQL.
    public var writeFailure: String?

    /// Creates a health report.
    public init(up: Bool, backend: LedgerBackend, lastConfirmed: Date, writeFailure: String? = nil) {
        self.up = up
        self.backend = backend
        self.lastConfirmed = lastConfirmed
        self.writeFailure = writeFailure
    }
}
