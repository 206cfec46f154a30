import Foundation
import Synchronization

/// The PostgreSQL backend: a pool of connections for the operations (`PostgresPool`), a change feed that
/// keeps the access index in step with every instance (`PostgresChangeFeed`), and dedicated sessions for
/// publish locks.
///
/// A write's result is returned only after its `COMMIT` succeeded. When it changed access state, it then
/// waits for the feed to read that state back into the index (`catchUp()`), so the caller sees its own write
/// in `access(...)` right away; the index is only ever written by the feed, in the database's order. That
/// poll also tells the other instances (the feed's `NOTIFY`): the write's transaction sends none.
package final class PostgresLedgerStorage: LedgerStorage {
    let backend = LedgerBackend.postgres
    let pool: PostgresPool
    let feed: PostgresChangeFeed
    private let refusingWrites = Mutex(false)

    private init(pool: PostgresPool, feed: PostgresChangeFeed) {
        self.pool = pool
        self.feed = feed
    }

    /// Connects to `location`, migrates the schema (under the migration advisory lock), and starts the change
    /// feed, which fills `index`. A refused login or an unreachable server is `.openFailed` with libpq's
    /// reason on one line, never the password.
    static func open(_ location: PostgresLocation, poolSize: Int, index: AccessIndex) async throws(LedgerError) -> PostgresLedgerStorage {
        guard poolSize >= 1 else { throw .invalidLocation(message: "the pool size must be at least 1") }
        let pool = PostgresPool(location: location, size: poolSize)
        do {
            try await migrate(pool)
        } catch {
            await pool.close()
            throw error
        }
        let feed = PostgresChangeFeed(pool: pool, index: index)
        do {
            try await feed.start()
        } catch {
            await pool.close()
            throw error
        }
        return PostgresLedgerStorage(pool: pool, feed: feed)
    }

    /// Brings the schema up to date on one pooled connection (`migrations` replaces the shipped list in tests).
    package static func migrate(_ pool: PostgresPool, migrations: [String] = PostgresLedgerSchema.migrations) async throws(LedgerError) {
        let location = pool.location
        let outcome: Result<Void, PostgresMigrationError>
        do {
            outcome = try await pool.run(nil, failure: { .openFailed(path: location.description, message: $0) }) { connection throws(PostgresError) in
                do throws(PostgresMigrationError) {
                    try PostgresLedgerSchema.migrate(connection, migrations: migrations)
                    return .success(())
                } catch {
                    if let underlying = error.underlying, underlying.connectionLost { throw underlying }
                    return .failure(error)
                }
            }
        } catch {
            if case .unavailable(let message) = error { throw .openFailed(path: location.description, message: message) }
            throw error
        }
        if case .failure(let error) = outcome { throw error.ledgerError(redact: location.redact) }
    }

    func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date, events: AccessEvents?
    ) async throws(LedgerError) -> [String: BindingDecision] {
        let refusing = refusesWrites
        let known = refusing ? nil : try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresLedgerStore(connection: connection).unchangedDecisions(purchases, account: account, policy: policy)
        }
        if let known {
            if known.values.contains(.boundToOtherAccount) { await feed.catchUp(announce: false) }
            return known
        }
        let (decisions, changed) = try await pool.run(.readCommitted, readOnly: refusing, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresLedgerStore(connection: connection).record(purchases, account: account, policy: policy, now: now, events: events)
        }
        // A refusal under `first` means another instance's binding is in the database: show it here too.
        if !changed.isEmpty || decisions.values.contains(.boundToOtherAccount) { await feed.catchUp(announce: !changed.isEmpty) }
        return decisions
    }

    func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], by: String, now: Date,
        events: AccessEvents?
    ) async throws(LedgerError) -> Bool {
        let changed = try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresLedgerStore(connection: connection).apply(
                notificationID: notificationID, type: type, revoke: revoke, restore: restore, by: by, now: now, events: events)
        }
        guard let changed else { return false }
        if !changed.isEmpty { await feed.catchUp() }
        return true
    }

    func purchases(originalTransactionID: String) async throws(LedgerError) -> [LedgerPurchase] {
        try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresLedgerStore(connection: connection).purchases(originalTransactionID: originalTransactionID)
        }
    }

    func purchaseRows(transactionID: String) async throws(LedgerError) -> PurchaseRows? {
        try await pool.run(.repeatableRead, readOnly: true, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresPurchaseRecords(connection: connection).rows(transactionID: transactionID)
        }
    }

    func purchaseRows(account: String, after: PurchaseCursor?, limit: Int) async throws(LedgerError) -> PurchaseRows {
        try await pool.run(.repeatableRead, readOnly: true, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresPurchaseRecords(connection: connection).rows(account: account, after: after, limit: limit)
        }
    }

    func tokenKey(generate: @escaping @Sendable () -> [UInt8]) async throws(LedgerError) -> [UInt8] {
        try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresLedgerStore(connection: connection).tokenKey(generate: generate)
        }
    }

    func claimNotificationSync(environment: String, owner: String, now: Date, lease: Double) async throws(LedgerError) -> NotificationSyncClaim {
        try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresNotificationSyncWindows(connection: connection).claim(environment: environment, owner: owner, now: now, lease: lease)
        }
    }

    func completeNotificationSync(environment: String, owner: String, through end: Date) async throws(LedgerError) -> Bool {
        try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresNotificationSyncWindows(connection: connection).complete(environment: environment, owner: owner, through: end)
        }
    }

    func releaseNotificationSync(environment: String, owner: String) async throws(LedgerError) {
        try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
            try PostgresNotificationSyncWindows(connection: connection).release(environment: environment, owner: owner)
        }
    }

    func publishLock(pack: String) async throws(LedgerError) -> LedgerPublishLock? {
        try await PostgresPublishLock.acquire(pack: pack, pool: pool)
    }

    /// A write probe: an `UPDATE` that changes no row, in a transaction (refused when the database, or this
    /// ledger in tests, accepts no writes; fails when the database cannot be reached).
    func checkWritable() async -> Bool {
        do {
            _ = try await pool.run(.readCommitted, readOnly: refusesWrites, failure: { .writeFailed(message: $0) }) { connection throws(PostgresError) in
                try connection.query("UPDATE ledger_settings SET value = value WHERE false")
            }
            return true
        } catch {
            return false
        }
    }

    var health: LedgerHealth {
        let (up, lastConfirmed) = feed.health
        return LedgerHealth(up: up, backend: .postgres, lastConfirmed: lastConfirmed)
    }

    var propagation: LedgerPropagation { feed.statistics }

    /// Makes every transaction of this ledger `READ ONLY` (the server then refuses writes with SQLSTATE 25006).
    func setQueryOnly(_ on: Bool) async throws(LedgerError) {
        refusingWrites.withLock { $0 = on }
    }

    func close() async {
        await feed.stop()
        await pool.close()
    }

    var refusesWrites: Bool { refusingWrites.withLock { $0 } }
}
