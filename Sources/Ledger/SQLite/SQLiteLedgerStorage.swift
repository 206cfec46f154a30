import Dispatch
import Foundation
import Platform
import Synchronization

/// The SQLite backend: one file (`<data>/ledger.sqlite`, spec §2.3), one connection, one private serial queue.
///
/// - Durability: WAL journal with `synchronous=FULL`, so a call that returned has been fsync'd and survives
///   a crash or power loss. Every write is one `BEGIN IMMEDIATE … COMMIT`; a failed write (disk full,
///   read-only file, I/O error) throws `LedgerError.writeFailed` and leaves nothing half-written. Such a
///   storage failure also marks the ledger unwritable (`health`, `/healthz`) until a probe commits
///   (`SQLiteWriteHealth`, `checkWritable()`).
/// - Threads: all SQLite work runs on the queue, never on the caller's thread nor on Swift's cooperative
///   pool; the `async` API is bridged with a continuation.
/// - The access index is updated after each commit with entries computed inside that transaction; the queue
///   serializes writes, so the index follows the file's order of commits.
final class SQLiteLedgerStorage: LedgerStorage {
    let backend = LedgerBackend.sqlite
    let queue: DispatchQueue
    let database: SQLiteDatabase
    private let index: AccessIndex
    let closed = Mutex(false)
    /// The file's schema version (`SQLiteLedgerSchema.currentVersion` once migrated).
    let schemaVersion: Int
    /// Whether a write failed for a storage reason and no probe has committed since.
    let writeHealth = SQLiteWriteHealth()
    /// The volume the file is on (its free space gates the probe that clears `writeHealth`).
    let space: any VolumeSpace
    /// The file's directory, for `space`.
    let directory: String

    private init(queue: DispatchQueue, database: SQLiteDatabase, index: AccessIndex, schemaVersion: Int, path: String,
                 space: any VolumeSpace) {
        self.queue = queue
        self.database = database
        self.index = index
        self.schemaVersion = schemaVersion
        self.space = space
        let directory = (path as NSString).deletingLastPathComponent
        self.directory = directory.isEmpty ? "." : directory
    }

    /// Opens the file at `path` (creating it and its directory unless `readOnly`), configures WAL,
    /// `synchronous=FULL`, foreign keys and a busy timeout, applies pending migrations, and fills `index`.
    /// `space` is the file's volume (tests fake a full one).
    static func open(
        at path: String, readOnly: Bool, index: AccessIndex, space: any VolumeSpace = SystemVolumeSpace()
    ) async throws(LedgerError) -> SQLiteLedgerStorage {
        try await open(at: path, readOnly: readOnly, migrate: true, index: index, space: space)
    }

    /// Opens an existing file only to read it (the copy's source, a backup's): no migration, no index, and the
    /// file is left as it is, so an older program still running on it keeps working.
    static func openExisting(at path: String) async throws(LedgerError) -> SQLiteLedgerStorage {
        guard FileManager.default.fileExists(atPath: path) else {
            throw .openFailed(path: path, message: "no such file")
        }
        return try await open(at: path, readOnly: false, migrate: false, index: AccessIndex(), space: SystemVolumeSpace())
    }

    private static func open(
        at path: String, readOnly: Bool, migrate: Bool, index: AccessIndex, space: any VolumeSpace
    ) async throws(LedgerError) -> SQLiteLedgerStorage {
        let queue = DispatchQueue(label: "depot.ledger.sqlite", qos: .userInitiated)
        let (database, version) = try await perform(on: queue) { () throws(LedgerError) in
            let database = try connect(path: path, readOnly: readOnly)
            do {
                guard migrate else { return (database, try SQLiteLedgerSchema.checkVersion(database)) }
                try SQLiteLedgerSchema.migrate(database)
                index.replaceAll(try SQLiteLedgerStore(database: database).allAccessEntries())
                return (database, SQLiteLedgerSchema.currentVersion)
            } catch let error as LedgerError {
                database.close()
                throw error
            } catch let error as SQLiteError {
                database.close()
                throw .openFailed(path: path, message: error.message)
            } catch {
                database.close()
                throw .openFailed(path: path, message: "\(error)")
            }
        }
        return SQLiteLedgerStorage(queue: queue, database: database, index: index, schemaVersion: version, path: path, space: space)
    }

    func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date, events: AccessEvents?
    ) async throws(LedgerError) -> [String: BindingDecision] {
        let (database, index) = (database, index)
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            let result = try self.writing { () throws(SQLiteError) in
                try SQLiteLedgerStore(database: database).record(purchases, account: account, policy: policy, now: now, events: events)
            }
            index.update(result.entries)
            return result.decisions
        }
    }

    func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], by: String, now: Date,
        events: AccessEvents?
    ) async throws(LedgerError) -> Bool {
        let (database, index) = (database, index)
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            let entries = try self.writing { () throws(SQLiteError) in
                try SQLiteLedgerStore(database: database).apply(
                    notificationID: notificationID, type: type, revoke: revoke, restore: restore, by: by, now: now, events: events)
            }
            guard let entries else { return false }
            index.update(entries)
            return true
        }
    }

    func purchases(originalTransactionID: String) async throws(LedgerError) -> [LedgerPurchase] {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try Self.reading(database) { () throws(SQLiteError) in
                try SQLiteLedgerStore(database: database).purchases(originalTransactionID: originalTransactionID)
            }
        }
    }

    func purchaseRows(transactionID: String) async throws(LedgerError) -> PurchaseRows? {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try Self.reading(database) { () throws(SQLiteError) in try SQLitePurchaseRecords(database: database).rows(transactionID: transactionID) }
        }
    }

    func purchaseRows(account: String, after: PurchaseCursor?, limit: Int) async throws(LedgerError) -> PurchaseRows {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try Self.reading(database) { () throws(SQLiteError) in
                try SQLitePurchaseRecords(database: database).rows(account: account, after: after, limit: limit)
            }
        }
    }

    func tokenKey(generate: @escaping @Sendable () -> [UInt8]) async throws(LedgerError) -> [UInt8] {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try self.writing { () throws(SQLiteError) in
                try SQLiteLedgerStore(database: database).tokenKey(generate: generate)
            }
        }
    }

    func claimNotificationSync(environment: String, owner: String, now: Date, lease: Double) async throws(LedgerError) -> NotificationSyncClaim {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try self.writing { () throws(SQLiteError) in
                try SQLiteNotificationSyncWindows(database: database).claim(environment: environment, owner: owner, now: now, lease: lease)
            }
        }
    }

    func completeNotificationSync(environment: String, owner: String, through end: Date) async throws(LedgerError) -> Bool {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try self.writing { () throws(SQLiteError) in
                try SQLiteNotificationSyncWindows(database: database).complete(environment: environment, owner: owner, through: end)
            }
        }
    }

    func releaseNotificationSync(environment: String, owner: String) async throws(LedgerError) {
        let database = database
        try await Self.perform(on: queue) { () throws(LedgerError) in
            try self.writing { () throws(SQLiteError) in
                try SQLiteNotificationSyncWindows(database: database).release(environment: environment, owner: owner)
            }
        }
    }

    func publishLock(pack: String) async throws(LedgerError) -> LedgerPublishLock? {
        guard !closed.withLock({ $0 }) else { throw .closed }
        return nil
    }

    var health: LedgerHealth {
        let failure = writeHealth.failure
        return LedgerHealth(up: !closed.withLock { $0 } && failure == nil, backend: .sqlite, lastConfirmed: Date(),
                            writeFailure: failure)
    }

    var propagation: LedgerPropagation { LedgerPropagation(lastConfirmed: Date()) }

    /// Turns SQLite's `query_only` on or off.
    func setQueryOnly(_ on: Bool) async throws(LedgerError) {
        let database = database
        try await Self.perform(on: queue) { () throws(LedgerError) in
            guard database.isOpen else { throw .closed }
            do throws(SQLiteError) { try database.execute("PRAGMA query_only = \(on ? "ON" : "OFF")") } catch {
                throw .writeFailed(message: error.message)
            }
        }
    }

    func close() async {
        let database = database
        _ = try? await Self.perform(on: queue) { () throws(LedgerError) in database.close() }
        closed.withLock { $0 = true }
    }

    /// The value of `PRAGMA <name>` on the ledger's own connection (tests check the durability settings).
    func pragma(_ name: String) async throws(LedgerError) -> String? {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) -> String? in
            try Self.reading(database) { () throws(SQLiteError) -> String? in
                switch try database.query("PRAGMA \(name)").first?.first {
                case .integer(let value): return String(value)
                case .text(let value): return value
                default: return nil
                }
            }
        }
    }

    /// A consistent copy of the file into `destination` (SQLite's online backup), on the ledger's queue.
    func backup(to destination: String) async throws(LedgerError) {
        let database = database
        try await Self.perform(on: queue) { () throws(LedgerError) in
            try Self.reading(database) { () throws(SQLiteError) in try database.backup(to: destination) }
        }
    }

    /// Every row and the file's schema version, in one read transaction (for the copy to PostgreSQL).
    func export() async throws(LedgerError) -> LedgerExport {
        let (database, version) = (database, schemaVersion)
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try Self.reading(database) { () throws(SQLiteError) in
                try SQLiteLedgerStore(database: database).export(schemaVersion: version)
            }
        }
    }

    /// Runs `body` as a write on the ledger's queue (failures are `writeFailed`).
    func write<Value: Sendable>(
        _ body: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> Value
    ) async throws(LedgerError) -> Value {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try self.writing { () throws(SQLiteError) in try body(database) }
        }
    }

    /// The statements the connection has run so far (tests).
    func statementsRun() async throws(LedgerError) -> Int {
        try await read { database in database.statementsRun }
    }

    /// Runs `body` as a read on the ledger's queue (failures are `readFailed`).
    func read<Value: Sendable>(
        _ body: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> Value
    ) async throws(LedgerError) -> Value {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            try Self.reading(database) { () throws(SQLiteError) in try body(database) }
        }
    }

    // MARK: - Private

    /// Opens the connection and sets the pragmas the ledger's guarantees rest on, checking each took effect.
    private static func connect(path: String, readOnly: Bool) throws(LedgerError) -> SQLiteDatabase {
        let directory = (path as NSString).deletingLastPathComponent
        if !readOnly, !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw .openFailed(path: path, message: "cannot create \(directory): \(error.localizedDescription)")
            }
        }
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path, readOnly: readOnly)
        } catch {
            throw .openFailed(path: path, message: error.message)
        }
        do {
            try database.setBusyTimeout(milliseconds: 5_000)
            let mode = try database.query("PRAGMA journal_mode = WAL").first?.first?.text?.lowercased()
            guard mode == "wal" else {
                database.close()
                throw LedgerError.openFailed(path: path, message: "journal_mode is \(mode ?? "unknown"), not wal")
            }
            try database.execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON")
        } catch let error as SQLiteError {
            database.close()
            throw .openFailed(path: path, message: error.message)
        } catch let error as LedgerError {
            throw error
        } catch {
            database.close()
            throw .openFailed(path: path, message: "\(error)")
        }
        return database
    }

    /// Runs a write on the queue, mapping SQLite failures to `LedgerError.writeFailed` (or `.closed`); a storage
    /// failure marks the ledger unwritable (`noteFailure(_:)`).
    private func writing<Result>(_ body: () throws(SQLiteError) -> Result) throws(LedgerError) -> Result {
        guard database.isOpen else { throw .closed }
        do {
            return try body()
        } catch {
            noteFailure(error)
            throw .writeFailed(message: error.message)
        }
    }

    /// Runs a read, mapping SQLite failures to `LedgerError.readFailed` (or `.closed`).
    private static func reading<Result>(
        _ database: SQLiteDatabase, _ body: () throws(SQLiteError) -> Result
    ) throws(LedgerError) -> Result {
        guard database.isOpen else { throw .closed }
        do {
            return try body()
        } catch {
            throw .readFailed(message: error.message)
        }
    }

    /// Runs `body` on `queue` and resumes the caller with its result. The continuation carries a `Result` so
    /// that the error type stays `LedgerError`.
    static func perform<Value: Sendable>(
        on queue: DispatchQueue, _ body: @escaping @Sendable () throws(LedgerError) -> Value
    ) async throws(LedgerError) -> Value {
        let result: Result<Value, LedgerError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(LedgerError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
