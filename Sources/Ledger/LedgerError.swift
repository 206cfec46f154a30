/// A ledger operation that failed. The backend's message is kept for the logs; it never contains a password.
public enum LedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A `--ledger` value that cannot be parsed (the message does not name the option).
    case invalidLocation(message: String)
    /// The ledger could not be created, opened or configured (SQLite file, WAL, ...; PostgreSQL login refused,
    /// server unreachable). `path` is the file or the URI without its password.
    case openFailed(path: String, message: String)
    /// Bringing the schema up to date failed at `version`, or the database is newer than this program.
    case migrationFailed(version: Int, message: String)
    /// A write failed (disk full, read-only, constraint, I/O error); nothing of it was committed.
    case writeFailed(message: String)
    /// A read failed.
    case readFailed(message: String)
    /// The database cannot be reached right now (PostgreSQL down, connection lost and not yet restored);
    /// nothing was committed, or the outcome is unknown and the operation is safe to repeat.
    case unavailable(message: String)
    /// The ledger was closed.
    case closed

    public var description: String {
        switch self {
        case .invalidLocation(let message): message
        case .openFailed(let path, let message): "cannot open ledger \(path): \(message)"
        case .migrationFailed(let version, let message): "ledger migration to version \(version) failed: \(message)"
        case .writeFailed(let message): "ledger write failed: \(message)"
        case .readFailed(let message): "ledger read failed: \(message)"
        case .unavailable(let message): "ledger unavailable: \(message)"
        case .closed: "ledger is closed"
        }
    }
}
