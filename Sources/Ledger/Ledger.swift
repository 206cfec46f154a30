public import Foundation
package import Platform
import Synchronization

/// The durable record of validated purchases, account bindings, revocations and processed notifications:
/// one SQLite file for one instance (`<data>/ledger.sqlite`, spec §2.3), or one PostgreSQL database shared
/// by any number of instances (scale-out §1). Both backends have exactly the same semantics.
///
/// - Durability: a call that returned has been committed (SQLite: WAL with `synchronous=FULL`; PostgreSQL:
///   `COMMIT` acknowledged by the server); a failed write leaves nothing half-written and throws.
///   PostgreSQL's serialization failures and deadlocks are retried, and a lost connection is replaced and
///   the operation run again (every operation is safe to repeat); an unreachable database is
///   `LedgerError.unavailable`.
/// - Threads: all database work runs on private serial queues (one per connection) or the change feed's own
///   thread, never on the caller's thread nor on Swift's cooperative pool.
/// - Reads on the hot path: `access(originalTransactionID:account:)` is answered from an in-memory index
///   and never touches the database. SQLite updates it after each commit; PostgreSQL's change feed keeps it
///   in step with what every instance commits (within 1 s; `propagation` shows how), and a write returns
///   once the index shows it.
///
/// Access rules:
/// - An original transaction is `.revoked` while a revocation in force (not restored by `REFUND_REVERSED`)
///   is not followed by a later non-revoked transaction of it. A refunded latest transaction or one-time
///   purchase cuts access off; a refunded old renewal does not cut off a current subscription. A revocation
///   naming a transaction never recorded counts at its revocation date.
/// - Bindings follow the `AccountPolicy`; a token for an account no longer bound (moved away by `transfer`)
///   is `.transferred`. A token without an account ignores bindings. An original never seen is `.allowed`
///   (tokens from operator grants). Under `first`, of two instances binding one purchase at once exactly one
///   wins; under `transfer` the last to commit does.
/// - A notification is applied once, even when it reaches two instances at the same moment.
public final class Ledger: Sendable {
    let storage: any LedgerStorage
    private let index: AccessIndex
    private let accessEvents = Mutex<AccessEvents?>(nil)
    private let deliveryEvents = Mutex<DeliveryEvents?>(nil)

    private init(storage: any LedgerStorage, index: AccessIndex) {
        self.storage = storage
        self.index = index
    }

    /// Opens the SQLite ledger at `path`, creating the file (and its parent directory) if needed, configuring
    /// WAL, `synchronous=FULL`, foreign keys and a busy timeout, applying pending migrations, and loading the
    /// access index.
    public static func open(at path: String) async throws(LedgerError) -> Ledger {
        try await open(at: path, readOnly: false)
    }

    /// `open(at:)`, optionally read-only (for tests of failing writes and for inspection tools).
    package static func open(at path: String, readOnly: Bool) async throws(LedgerError) -> Ledger {
        let index = AccessIndex()
        let storage = try await SQLiteLedgerStorage.open(at: path, readOnly: readOnly, index: index)
        return Ledger(storage: storage, index: index)
    }

    /// `open(at:)` on a volume whose free space is `space`'s (tests fake a full disk for the write probe).
    package static func open(at path: String, space: any VolumeSpace) async throws(LedgerError) -> Ledger {
        let index = AccessIndex()
        let storage = try await SQLiteLedgerStorage.open(at: path, readOnly: false, index: index, space: space)
        return Ledger(storage: storage, index: index)
    }

    /// Opens the ledger at `location` (`sqlite` resolves to `<dataDirectory>/ledger.sqlite`; `poolSize` is
    /// ignored there). For PostgreSQL: connects (`poolSize` connections, `--ledger-pool`, opened as needed;
    /// at least 1), creates or migrates the schema under an advisory
    /// lock, loads the access index and starts following other instances' changes. A refused login or an
    /// unreachable server throws `.openFailed` with one line that never contains the password.
    public static func open(_ location: LedgerLocation, dataDirectory: String, poolSize: Int = 8) async throws(LedgerError) -> Ledger {
        switch location {
        case .sqlite:
            return try await open(at: location.sqlitePath(dataDirectory: dataDirectory) ?? dataDirectory + "/ledger.sqlite")
        case .postgres(let postgres):
            let index = AccessIndex()
            let storage = try await PostgresLedgerStorage.open(postgres, poolSize: poolSize, index: index)
            return Ledger(storage: storage, index: index)
        }
    }

    /// `sqlite` or `postgres`.
    public var backend: LedgerBackend { storage.backend }

    /// Upserts the purchases and binds each original transaction to `account` per `policy` (no account: no
    /// binding, always granted), in one transaction, durable before returning. Returns a decision per
    /// original transaction ID. A purchase carrying `revocationDate` is recorded as revoked too (unless a
    /// revocation for it is already on file).
    public func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date
    ) async throws(LedgerError) -> [String: BindingDecision] {
        try await storage.record(purchases, account: account, policy: policy, now: now, events: accessEvents.withLock { $0 })
    }

    /// From now on, every access change this ledger object writes — a purchase granted, a transaction revoked,
    /// a revocation lifted, by whatever path — is turned by `events` into an outbox entry queued in the same
    /// transaction (the webhooks `purchase.granted`, `purchase.revoked`, `purchase.restored`). Changes written
    /// by another instance are that instance's to announce.
    public func raiseAccessEvents(_ events: @escaping AccessEvents) {
        accessEvents.withLock { $0 = events }
    }

    /// From now on, a delivery-record write (`recordDeliveries`) that gives a purchase the last chunk of a pack
    /// version (by the totals its spans carry) queues `events`'s entry in the same transaction (the webhook
    /// `pack.delivered`): the record and its announcement are committed together or not at all.
    public func raiseDeliveryEvents(_ events: @escaping DeliveryEvents) {
        deliveryEvents.withLock { $0 = events }
    }

    /// What `raiseDeliveryEvents(_:)` registered.
    var registeredDeliveryEvents: DeliveryEvents? { deliveryEvents.withLock { $0 } }

    /// Applies an App Store Server Notification idempotently, in one transaction: revokes `revoke`, restores
    /// the transactions in `restore` (`REFUND_REVERSED`), and remembers `notificationID`. Returns `false`,
    /// changing nothing, when `notificationID` was processed before (by any instance). A support decision goes
    /// the same way with its own ID (`admin:revoke:<original>:<n>`, see `supportChange`), `by: "admin"` (kept as
    /// `revocations.restored_by` for a restore; a support revocation's `reason` is `support`), so it is enforced
    /// everywhere like a refund and raises the same events.
    public func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], by: String = "apple", now: Date
    ) async throws(LedgerError) -> Bool {
        try await storage.apply(notificationID: notificationID, type: type, revoke: revoke, restore: restore, by: by, now: now,
                                events: accessEvents.withLock { $0 })
    }

    /// Claims the notification catch-up window of `environment` for `owner` for `lease` seconds (spec
    /// app-store-server-api §6), unless another instance holds it: of instances sharing a ledger, one reads a
    /// given window, and an instance that crashed holds it until `lease` runs out. The claim ends with
    /// `completeNotificationSync` or `releaseNotificationSync`.
    public func claimNotificationSync(
        environment: String, owner: String, now: Date, lease: Double
    ) async throws(LedgerError) -> NotificationSyncClaim {
        try await storage.claimNotificationSync(environment: environment, owner: owner, now: now, lease: lease)
    }

    /// Records that the window of `environment` was synced through `end` and drops `owner`'s claim; false
    /// (nothing stored) when `owner` no longer holds the claim.
    public func completeNotificationSync(environment: String, owner: String, through end: Date) async throws(LedgerError) -> Bool {
        try await storage.completeNotificationSync(environment: environment, owner: owner, through: end)
    }

    /// Drops `owner`'s claim on the window of `environment` without moving it (a failed sync).
    public func releaseNotificationSync(environment: String, owner: String) async throws(LedgerError) {
        try await storage.releaseNotificationSync(environment: environment, owner: owner)
    }

    /// Whether a download token for `originalTransactionID` (issued to `account`) may still be honoured.
    /// O(1) and non-blocking: served from memory, never from the database.
    public func access(originalTransactionID: String, account: String?) -> AccessState {
        index.access(originalTransactionID: originalTransactionID, account: account)
    }

    /// The recorded purchases of one original transaction, oldest first (for tests and operations).
    public func purchases(originalTransactionID: String) async throws(LedgerError) -> [LedgerPurchase] {
        try await storage.purchases(originalTransactionID: originalTransactionID)
    }

    /// The download-token HMAC key kept in the ledger: the stored one, or `generate()`'s, stored atomically
    /// if there is none yet (of instances starting together, all get the first one committed). With
    /// PostgreSQL this is how replicas share a key without `--token-secret`; a SQLite deployment keeps
    /// `<data>/token.key` (the server chooses which to use).
    public func tokenKey(generate: @escaping @Sendable () -> [UInt8]) async throws(LedgerError) -> [UInt8] {
        try await storage.tokenKey(generate: generate)
    }

    /// Takes the database's publish lock for `pack` (PostgreSQL: a session advisory lock on a dedicated
    /// connection, waiting while another host holds it). `nil` for SQLite, which serves one host: the
    /// publisher's file lock is enough there.
    public func publishLock(pack: String) async throws(LedgerError) -> LedgerPublishLock? {
        try await storage.publishLock(pack: pack)
    }

    /// Runs `body` holding the publish lock for `pack` (see `publishLock(pack:)`), releasing it afterwards
    /// whether `body` returns or throws.
    public func withPublishLock<Value>(pack: String, _ body: () async throws -> Value) async throws -> Value {
        let lock = try await publishLock(pack: pack)
        do {
            let value = try await body()
            await lock?.release()
            return value
        } catch {
            await lock?.release()
            throw error
        }
    }

    /// A cheap write probe for `/healthz` (SQLite: takes the write lock in a transaction rolled back, or,
    /// after a write failed for a storage reason, commits a one-page write once the volume has 1 MiB free;
    /// PostgreSQL: a transaction with an `UPDATE` that matches nothing). `false` when closed, read-only,
    /// unreachable, cannot be written (SQLite: until a probe commits) or, for PostgreSQL, locked.
    public func checkWritable() async -> Bool {
        await storage.checkWritable()
    }

    /// Whether the backend is reachable now and when the access index was last confirmed current.
    public var health: LedgerHealth { storage.health }

    /// How other instances' changes reach this index (PostgreSQL's change feed; zeros for SQLite).
    public var propagation: LedgerPropagation { storage.propagation }

    /// Closes the ledger (after the calls already queued). Later calls fail with `.closed`; `access` keeps
    /// answering from memory.
    public func close() async {
        await storage.close()
    }

    /// Copies a SQLite ledger into a PostgreSQL ledger that is empty or was filled by an earlier copy, without
    /// touching the SQLite file (a server may keep using it). Idempotent: rows already there are kept, so
    /// running it again adds nothing twice. Instances already running on the PostgreSQL ledger pick up the
    /// copied state through their change feeds.
    public static func copy(from source: LedgerLocation, to target: LedgerLocation, dataDirectory: String) async throws(LedgerError) -> LedgerCopyReport {
        try await LedgerCopy.copy(from: source, to: target, dataDirectory: dataDirectory)
    }

    /// Writes a consistent copy of a SQLite ledger to `destination` with SQLite's online backup API, while a
    /// server keeps reading and writing the ledger. `destination` is replaced atomically.
    public static func backup(_ location: LedgerLocation, dataDirectory: String, to destination: String) async throws(LedgerError) {
        try await LedgerCopy.backup(location, dataDirectory: dataDirectory, to: destination)
    }

    // MARK: - Tests

    /// Makes the backend refuse writes (SQLite `query_only`; PostgreSQL `READ ONLY` transactions), or
    /// accept them again: a stand-in for a database that stopped accepting writes.
    package func setQueryOnly(_ on: Bool) async throws(LedgerError) {
        try await storage.setQueryOnly(on)
    }

    /// The value of `PRAGMA <name>` on a SQLite ledger's connection (`nil` for PostgreSQL).
    package func pragma(_ name: String) async throws(LedgerError) -> String? {
        guard let sqlite = storage as? SQLiteLedgerStorage else { return nil }
        return try await sqlite.pragma(name)
    }

    /// The statements a SQLite ledger's connection has run so far (`nil` for PostgreSQL, whose connections
    /// count round trips: `postgresPool`): tests hold a read to a budget of queries with it.
    package func sqliteStatementsRun() async throws(LedgerError) -> Int? {
        guard let sqlite = storage as? SQLiteLedgerStorage else { return nil }
        return try await sqlite.statementsRun()
    }

    /// The connection pool of a PostgreSQL ledger (`nil` for SQLite): tests count its round trips and
    /// reconnects through it.
    package var postgresPool: PostgresPool? { (storage as? PostgresLedgerStorage)?.pool }

    /// The number of original transactions the in-memory index holds (bound or revoked).
    package var indexedCount: Int { index.count }
}
