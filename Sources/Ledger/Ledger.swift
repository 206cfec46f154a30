import Dispatch
public import Foundation

/// The durable record of validated purchases, account bindings, revocations and processed notifications,
/// kept in one SQLite file (`<data>/ledger.sqlite`, spec §2.3).
///
/// - Durability: WAL journal with `synchronous=FULL`, so a call that returned has been fsync'd and survives
///   a crash or power loss. Every write is one `BEGIN IMMEDIATE … COMMIT`; a failed write (disk full,
///   read-only file, I/O error) throws `LedgerError.writeFailed` and leaves nothing half-written.
/// - Threads: all SQLite work runs on one private serial `DispatchQueue`, never on the caller's thread nor
///   on Swift's cooperative pool; the `async` API is bridged with a continuation.
/// - Reads on the hot path: `access(originalTransactionID:account:)` is answered from an in-memory index
///   (loaded at open, updated only after a commit succeeded) and never touches SQLite.
///
/// Access rules:
/// - An original transaction is `.revoked` while a revocation in force (not restored by `REFUND_REVERSED`)
///   is not followed by a later non-revoked transaction of it. A refunded latest transaction or one-time
///   purchase cuts access off; a refunded old renewal does not cut off a current subscription. A revocation
///   naming a transaction never recorded counts at its revocation date.
/// - Bindings follow the `AccountPolicy`; a token for an account no longer bound (moved away by `transfer`)
///   is `.transferred`. A token without an account ignores bindings. An original never seen is `.allowed`
///   (tokens from operator grants).
public final class Ledger: Sendable {
    private let queue: DispatchQueue
    private let database: SQLiteDatabase
    private let index: AccessIndex

    private init(queue: DispatchQueue, database: SQLiteDatabase, index: AccessIndex) {
        self.queue = queue
        self.database = database
        self.index = index
    }

    /// Opens the ledger at `path`, creating the file (and its parent directory) if needed, configuring WAL,
    /// `synchronous=FULL`, foreign keys and a busy timeout, applying pending migrations, and loading the
    /// access index.
    public static func open(at path: String) async throws(LedgerError) -> Ledger {
        try await open(at: path, readOnly: false)
    }

    /// `open(at:)`, optionally read-only (for tests of failing writes and for inspection tools).
    static func open(at path: String, readOnly: Bool) async throws(LedgerError) -> Ledger {
        let queue = DispatchQueue(label: "depot.ledger", qos: .userInitiated)
        let (database, entries) = try await perform(on: queue) { () throws(LedgerError) in
            let database = try connect(path: path, readOnly: readOnly)
            do {
                try LedgerSchema.migrate(database)
                let entries = try LedgerStore(database: database).allAccessEntries()
                return (database, entries)
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
        return Ledger(queue: queue, database: database, index: AccessIndex(entries))
    }

    /// Upserts the purchases and binds each original transaction to `account` per `policy` (no account: no
    /// binding, always granted), in one SQL transaction, durable before returning. Returns a decision per
    /// original transaction ID. A purchase carrying `revocationDate` is recorded as revoked too (unless a
    /// revocation for it is already on file).
    public func record(
        _ purchases: [LedgerPurchase], account: String?, policy: AccountPolicy, now: Date
    ) async throws(LedgerError) -> [String: BindingDecision] {
        let (database, index) = (database, index)
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            let result = try Self.writing(database) { () throws(SQLiteError) in
                try LedgerStore(database: database).record(purchases, account: account, policy: policy, now: now)
            }
            index.update(result.entries)
            return result.decisions
        }
    }

    /// Applies an App Store Server Notification idempotently, in one transaction: revokes `revoke`, restores
    /// the transactions in `restore` (`REFUND_REVERSED`), and remembers `notificationID`. Returns `false`,
    /// changing nothing, when `notificationID` was processed before.
    public func apply(
        notificationID: String, type: String, revoke: [LedgerRevocation], restore: [String], now: Date
    ) async throws(LedgerError) -> Bool {
        let (database, index) = (database, index)
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            let entries = try Self.writing(database) { () throws(SQLiteError) in
                try LedgerStore(database: database).apply(
                    notificationID: notificationID, type: type, revoke: revoke, restore: restore, now: now)
            }
            guard let entries else { return false }
            index.update(entries)
            return true
        }
    }

    /// Whether a download token for `originalTransactionID` (issued to `account`) may still be honoured.
    /// O(1) and non-blocking: served from memory, never from SQLite.
    public func access(originalTransactionID: String, account: String?) -> AccessState {
        index.access(originalTransactionID: originalTransactionID, account: account)
    }

    /// The recorded purchases of one original transaction, oldest first (for tests and operations).
    public func purchases(originalTransactionID: String) async throws(LedgerError) -> [LedgerPurchase] {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) in
            guard database.isOpen else { throw .closed }
            do throws(SQLiteError) {
                return try LedgerStore(database: database).purchases(originalTransactionID: originalTransactionID)
            } catch {
                throw .readFailed(message: error.message)
            }
        }
    }

    /// A cheap write probe for `/healthz`: takes the write lock and writes the header page inside a
    /// transaction that is rolled back. `false` when the ledger is closed, read-only or cannot lock.
    public func checkWritable() async -> Bool {
        let database = database
        let result = try? await Self.perform(on: queue) { () throws(LedgerError) -> Bool in
            guard database.isOpen, !database.isReadOnly else { return false }
            do {
                try database.execute("BEGIN IMMEDIATE")
                defer { try? database.execute("ROLLBACK") }
                try database.execute("PRAGMA user_version = \(LedgerSchema.currentVersion)")
                return true
            } catch {
                return false
            }
        }
        return result ?? false
    }

    /// Closes the database (after the calls already queued). Later calls fail with `.closed`; `access`
    /// keeps answering from memory.
    public func close() async {
        let database = database
        _ = try? await Self.perform(on: queue) { () throws(LedgerError) in database.close() }
    }

    /// Turns SQLite's `query_only` on or off: a stand-in for a file that stopped accepting writes (tests).
    func setQueryOnly(_ on: Bool) async throws(LedgerError) {
        let database = database
        try await Self.perform(on: queue) { () throws(LedgerError) in
            guard database.isOpen else { throw .closed }
            do throws(SQLiteError) { try database.execute("PRAGMA query_only = \(on ? "ON" : "OFF")") } catch {
                throw .writeFailed(message: error.message)
            }
        }
    }

    /// The value of `PRAGMA <name>` on the ledger's own connection (tests check the durability settings).
    func pragma(_ name: String) async throws(LedgerError) -> String? {
        let database = database
        return try await Self.perform(on: queue) { () throws(LedgerError) -> String? in
            guard database.isOpen else { throw .closed }
            do throws(SQLiteError) {
                switch try database.query("PRAGMA \(name)").first?.first {
                case .integer(let value): return String(value)
                case .text(let value): return value
                default: return nil
                }
            } catch {
                throw .readFailed(message: error.message)
            }
        }
    }

    /// The number of original transactions the in-memory index holds (bound or revoked).
    var indexedCount: Int { index.count }

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

    /// Runs a write, mapping SQLite failures to `LedgerError.writeFailed` (or `.closed`).
    private static func writing<Result>(
        _ database: SQLiteDatabase, _ body: () throws(SQLiteError) -> Result
    ) throws(LedgerError) -> Result {
        guard database.isOpen else { throw .closed }
        do {
            return try body()
        } catch {
            throw .writeFailed(message: error.message)
        }
    }

    /// Runs `body` on `queue` and resumes the caller with its result. The continuation carries a `Result` so
    /// that the error type stays `LedgerError`.
    private static func perform<Value: Sendable>(
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
