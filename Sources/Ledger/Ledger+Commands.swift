import Foundation

/// What the commands that run no server (`depot token`, `depot publish`, ...) need from a ledger, without
/// opening it whole (no pool of `--ledger-pool` connections, no change feed, no access index).
extension Ledger {
    /// The download-token key held by the PostgreSQL ledger at `location` (created atomically if there is none
    /// yet, after bringing the schema up to date, exactly as a starting server does); `nil` for a SQLite
    /// location, whose key is `<data>/token.key`. A refused login or an unreachable server is `.openFailed`.
    public static func tokenKey(at location: LedgerLocation, generate: @escaping @Sendable () -> [UInt8]) async throws(LedgerError) -> [UInt8]? {
        guard case .postgres(let postgres) = location else { return nil }
        let pool = PostgresPool(location: postgres, size: 1, application: "depot-token-key")
        do {
            try await PostgresLedgerStorage.migrate(pool)
            let key = try await pool.run(.readCommitted, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
                try PostgresLedgerStore(connection: connection).tokenKey(generate: generate)
            }
            await pool.close()
            return key
        } catch {
            await pool.close()
            if case .unavailable(let message) = error { throw .openFailed(path: postgres.description, message: message) }
            throw error
        }
    }

    /// The publish lock of the PostgreSQL ledger at `location` for `pack` (see `publishLock(pack:)`), on a session
    /// of its own that `release()` closes; `nil` for a SQLite location. A refused login or an unreachable server
    /// is `.openFailed`.
    public static func publishLock(at location: LedgerLocation, pack: String) async throws(LedgerError) -> LedgerPublishLock? {
        guard case .postgres(let postgres) = location else { return nil }
        let pool = PostgresPool(location: postgres, size: 1, application: "depot-publish-lock")
        do {
            let lock = try await PostgresPublishLock.acquire(pack: pack, pool: pool)
            return LedgerPublishLock(release: {
                await lock.release()
                await pool.close()
            }, isHeld: { await lock.isHeld })
        } catch {
            await pool.close()
            if case .unavailable(let message) = error { throw .openFailed(path: postgres.description, message: message) }
            throw error
        }
    }
}
