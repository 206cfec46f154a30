import Foundation

/// Moving a ledger: the SQLite → PostgreSQL copy and the SQLite online backup.
enum LedgerCopy {
    /// See `Ledger.copy(from:to:dataDirectory:)`.
    static func copy(from source: LedgerLocation, to target: LedgerLocation, dataDirectory: String) async throws(LedgerError) -> LedgerCopyReport {
        guard let path = source.sqlitePath(dataDirectory: dataDirectory) else {
            throw .invalidLocation(message: "the copy's source must be a SQLite ledger (sqlite or sqlite:PATH)")
        }
        guard case .postgres(let location) = target else {
            throw .invalidLocation(message: "the copy's target must be a PostgreSQL ledger (postgres://...)")
        }
        let sqlite = try await SQLiteLedgerStorage.openExisting(at: path)
        let export: LedgerExport
        do {
            export = try await sqlite.export()
            await sqlite.close()
        } catch {
            await sqlite.close()
            throw error
        }
        let pool = PostgresPool(location: location, size: 1, application: "depot-ledger-copy")
        do throws(LedgerError) {
            try await PostgresLedgerStorage.migrate(pool)
            let outcome = try await pool.run(.readCommitted, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
                try PostgresLedgerStore(connection: connection).importRows(export, source: path)
            }
            await pool.close()
            guard let report = outcome else {
                throw .writeFailed(message: "the PostgreSQL ledger already holds purchases that were not copied from SQLite; copy into an empty database")
            }
            return report
        } catch {
            await pool.close()
            throw error
        }
    }

    /// See `Ledger.backup(_:dataDirectory:to:)`.
    static func backup(_ location: LedgerLocation, dataDirectory: String, to destination: String) async throws(LedgerError) {
        guard let path = location.sqlitePath(dataDirectory: dataDirectory) else {
            throw .invalidLocation(message: "backup copies a SQLite ledger; back up a PostgreSQL ledger with pg_dump")
        }
        let resolvedSource = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        let resolvedTarget = URL(fileURLWithPath: destination).standardizedFileURL.resolvingSymlinksInPath().path
        guard resolvedSource != resolvedTarget else {
            throw .writeFailed(message: "the backup must not replace the ledger itself")
        }
        let sqlite = try await SQLiteLedgerStorage.openExisting(at: path)
        do {
            try await sqlite.backup(to: destination)
            await sqlite.close()
        } catch {
            await sqlite.close()
            throw error
        }
    }
}
