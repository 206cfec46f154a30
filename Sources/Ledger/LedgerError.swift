/// A ledger operation that failed. The SQLite message is kept for the logs.
public enum LedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database file could not be created, opened or configured (WAL, `synchronous=FULL`, ...).
    case openFailed(path: String, message: String)
    /// Bringing the schema up to date failed at `version`, or the file is newer than this program.
    case migrationFailed(version: Int, message: String)
    /// A write failed (disk full, read-only file, I/O error); nothing of it was committed.
    case writeFailed(message: String)
    /// A read failed.
    case readFailed(message: String)
    /// The ledger was closed.
    case closed

    public var description: String {
        switch self {
        case .openFailed(let path, let message): "cannot open ledger \(path): \(message)"
        case .migrationFailed(let version, let message): "ledger migration to version \(version) failed: \(message)"
        case .writeFailed(let message): "ledger write failed: \(message)"
        case .readFailed(let message): "ledger read failed: \(message)"
        case .closed: "ledger is closed"
        }
    }
}
