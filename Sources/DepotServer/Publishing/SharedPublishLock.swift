public import Ledger

/// The lock that serializes publishing across hosts (scale-out §4). Every publisher already takes the file
/// lock `content/.staging/.lock` (one at a time per host, and across hosts where the shared file system
/// honours `flock`); with a PostgreSQL ledger it first takes this one as well, an advisory lock in the
/// database, which holds across hosts whatever the file system does.
///
/// It is one lock for every change of the catalog and content (`publish`, `retire`, `prune`, rollbacks, promotes,
/// and by the admin API also product edits and discarded uploads), like the file lock: changes of different packs
/// also rewrite the same `catalog/products.json`, and must not lose each other's edits.
public struct SharedPublishLock: Sendable {
    /// The name every change locks (no pack ID can be `*`).
    static let name = "*"

    private let take: @Sendable () async throws(LedgerError) -> LedgerPublishLock?

    /// The lock of a running server's ledger (none on SQLite).
    init(ledger: Ledger) {
        take = { () async throws(LedgerError) -> LedgerPublishLock? in try await ledger.publishLock(pack: Self.name) }
    }

    /// The lock of the ledger at `location`, for a command that opens no ledger otherwise (none on SQLite).
    public init(location: LedgerLocation) {
        take = { () async throws(LedgerError) -> LedgerPublishLock? in try await Ledger.publishLock(at: location, pack: Self.name) }
    }

    /// Runs `body` holding the lock, and releases it afterwards. Throws, running nothing, when the lock cannot
    /// be taken (the database is unreachable).
    public func holding<Value: Sendable>(_ body: @Sendable () async -> Value) async throws(LedgerError) -> Value {
        let lock = try await take()
        let value = await body()
        await lock?.release()
        return value
    }
}
