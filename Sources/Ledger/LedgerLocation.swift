/// Where the ledger lives: the spec's `--ledger` values (scale-out §1).
///
/// - `sqlite`: `<data>/ledger.sqlite`, the embedded default for one instance.
/// - `sqlite:PATH`: a SQLite file elsewhere.
/// - `postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?PARAMS]` or `postgresql://...`: a PostgreSQL database
///   that several instances share (see `PostgresLocation`).
public enum LedgerLocation: Sendable, Equatable, CustomStringConvertible {
    /// A SQLite file: `nil` means `<data>/ledger.sqlite`.
    case sqlite(path: String?)
    /// A PostgreSQL database.
    case postgres(PostgresLocation)

    /// Parses a `--ledger` value. The error's message names the problem without the option name (the caller
    /// adds it) and never contains a password.
    public init(parsing text: String) throws(LedgerError) {
        if text == "sqlite" {
            self = .sqlite(path: nil)
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw .invalidLocation(message: "sqlite: needs a path (sqlite:PATH)") }
            guard !path.contains("\0") else { throw .invalidLocation(message: "the SQLite path contains a NUL character") }
            self = .sqlite(path: path)
        } else if text.lowercased().hasPrefix("postgres://") || text.lowercased().hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(parsing: text))
        } else {
            throw .invalidLocation(message: "expected sqlite, sqlite:PATH or a postgres:// URI")
        }
    }

    /// Which backend this location selects.
    public var backend: LedgerBackend {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    /// The SQLite file for this location (`nil` for PostgreSQL).
    public func sqlitePath(dataDirectory: String) -> String? {
        switch self {
        case .sqlite(let path): path ?? dataDirectory + "/ledger.sqlite"
        case .postgres: nil
        }
    }

    /// `sqlite`, `sqlite:PATH`, or the PostgreSQL URI without its password.
    public var description: String {
        switch self {
        case .sqlite(nil): "sqlite"
        case .sqlite(let path?): "sqlite:\(path)"
        case .postgres(let location): location.description
        }
    }
}

/// The two ledger backends.
public enum LedgerBackend: String, Sendable, Equatable, CaseIterable {
    /// One SQLite file, one instance.
    case sqlite
    /// A PostgreSQL database shared by any number of instances.
    case postgres
}
