/// A migration that failed, or a database newer than the program.
struct PostgresMigrationError: Error, Sendable {
    /// The version being applied (or found, when newer).
    var version: Int
    /// The database error, when there was one.
    var underlying: PostgresError?
    /// The program's version when the database is newer.
    var newerThan: Int?

    init(version: Int, underlying: PostgresError) {
        self.version = version
        self.underlying = underlying
    }

    init(version: Int, newerThan current: Int) {
        self.version = version
        self.newerThan = current
    }

    /// The ledger error for it, with `redact` applied to the database's message.
    func ledgerError(redact: (String) -> String) -> LedgerError {
        if let newerThan {
            return .migrationFailed(
                version: version,
                message: "the database is at schema version \(version), newer than this program's \(newerThan)")
        }
        return .migrationFailed(version: version, message: redact(underlying?.description ?? "unknown failure"))
    }
}
