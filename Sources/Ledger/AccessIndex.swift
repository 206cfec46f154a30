import Synchronization

/// What the ledger knows about one original transaction, reduced to what a download check needs.
struct AccessEntry: Sendable, Equatable {
    /// The accounts the original transaction is bound to (empty: not bound).
    var accounts: Set<String>
    /// Whether a revocation in force cuts the original transaction off (see `Ledger` for the rule).
    var revoked: Bool

    /// Whether the entry says nothing beyond the default (`allowed` for everyone) and need not be kept.
    var isDefault: Bool { accounts.isEmpty && !revoked }
}

/// The in-memory answer to "may this token still download?", kept next to the database so the event
/// loops never wait for SQLite.
///
/// Only original transactions that are bound or revoked have an entry; any other is `allowed`. The index is
/// filled at open and changed only with entries read from committed state: SQLite's after each commit, from
/// inside that transaction; PostgreSQL's by the change feed, from the database. It never shows a state the
/// database does not hold (or, for PostgreSQL, did not hold a moment ago).
final class AccessIndex: Sendable {
    private let entries: Mutex<[String: AccessEntry]>

    init(_ entries: [String: AccessEntry] = [:]) {
        self.entries = Mutex(entries.filter { !$0.value.isDefault })
    }

    /// The access state for a token naming `originalTransactionID` and `account`.
    func access(originalTransactionID: String, account: String?) -> AccessState {
        entries.withLock { entries in
            guard let entry = entries[originalTransactionID] else { return .allowed }
            if entry.revoked { return .revoked }
            guard let account, !entry.accounts.isEmpty else { return .allowed }
            return entry.accounts.contains(account) ? .allowed : .transferred
        }
    }

    /// Replaces the entries of the given original transactions (a default entry removes it).
    func update(_ changes: [String: AccessEntry]) {
        guard !changes.isEmpty else { return }
        entries.withLock { entries in
            for (original, entry) in changes {
                entries[original] = entry.isDefault ? nil : entry
            }
        }
    }

    /// Replaces every entry at once (a full load at open, or a resync after a reconnection).
    func replaceAll(_ all: [String: AccessEntry]) {
        let kept = all.filter { !$0.value.isDefault }
        entries.withLock { $0 = kept }
    }

    /// The number of original transactions with a non-default entry.
    var count: Int { entries.withLock { $0.count } }
}
