import CSQLite
import Dispatch
import Synchronization

/// Whether a SQLite ledger can be written (operations.md §3: a SQLite ledger that cannot be written makes the
/// instance `unavailable`).
///
/// A write that fails for a storage reason (the disk is full or the file at its page limit, the file or its
/// volume is read-only, an I/O error, the file cannot be opened or is not a sound database) marks the ledger
/// unwritable. A busy or locked database, a constraint or any other failure of one statement does not: the next
/// write may well succeed. Only a write probe that commits clears the mark (`SQLiteLedgerStorage.probeCommits()`):
/// a later real write may commit without writing anything (a receipt already recorded), so its success proves
/// nothing. The state changes on the ledger's queue; the mutex lets `health` read it from any thread.
final class SQLiteWriteHealth: Sendable {
    private struct State {
        /// What the write that marked the ledger said, while it is marked.
        var failure: String?
        /// Whether a periodic probe is scheduled on the ledger's queue.
        var probing = false
    }

    private let state = Mutex(State())

    /// Free bytes the ledger's volume must have before a probe may clear the mark: a write that failed half-way
    /// leaves the space of its first frames allocated in the WAL file, where a one-page probe fits though the
    /// next real write does not.
    static let spaceNeeded: Int64 = 1 << 20
    /// How often the probe runs while the ledger is marked (and on each `/healthz`).
    static let probeInterval = DispatchTimeInterval.seconds(1)

    /// What the write that marked the ledger said, while it is marked; `nil` while it can be written.
    var failure: String? { state.withLock { $0.failure } }

    /// Notes a failed write (or probe). `true` when it marked the ledger and no probe is scheduled yet: the
    /// caller schedules one.
    func note(_ error: SQLiteError) -> Bool {
        guard Self.isStorageFailure(error.code) else { return false }
        return state.withLock { state in
            state.failure = error.message
            defer { state.probing = true }
            return !state.probing
        }
    }

    /// A probe committed: the ledger can be written again.
    func clear() {
        state.withLock { $0.failure = nil }
    }

    /// The periodic probe stopped (the mark was cleared, or the ledger closed).
    func stopProbing() {
        state.withLock { $0.probing = false }
    }

    /// Whether a failure with this (extended) result code means the file cannot be written now.
    static func isStorageFailure(_ code: Int32) -> Bool {
        switch code & 0xff {
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB: true
        default: false
        }
    }

    /// Whether the failure was another connection holding the lock (transient: not "cannot be written").
    static func isBusy(_ code: Int32) -> Bool {
        code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED
    }
}
