import Dispatch
import Platform
import Synchronization

/// The write probes of `/healthz` and the mark of a ledger that cannot be written (`SQLiteWriteHealth`).
extension SQLiteLedgerStorage {
    /// A cheap write probe for `/healthz`. While the ledger is writable: takes the write lock and writes the
    /// header page inside a transaction that is rolled back (nothing reaches the disk); another connection
    /// holding the lock counts as writable. While a write has marked it unwritable: `probeCommits()`. `false`
    /// when the ledger is closed, read-only, or cannot be written.
    func checkWritable() async -> Bool {
        let result = try? await Self.perform(on: queue) { () throws(LedgerError) -> Bool in
            guard self.database.isOpen, !self.database.isReadOnly else { return false }
            if self.writeHealth.failure != nil { return self.probeCommits() }
            do throws(SQLiteError) {
                try self.database.execute("BEGIN IMMEDIATE")
                defer { try? self.database.execute("ROLLBACK") }
                try self.database.execute("PRAGMA user_version = \(self.schemaVersion)")
                return true
            } catch {
                if SQLiteWriteHealth.isBusy(error.code) { return true }
                self.noteFailure(error)
                return false
            }
        }
        return result ?? false
    }

    /// On the queue, after a write failed: marks the ledger when the failure is a storage one, and then probes
    /// every `SQLiteWriteHealth.probeInterval` until a probe commits.
    func noteFailure(_ error: SQLiteError) {
        if writeHealth.note(error) { scheduleProbe() }
    }

    /// On the queue, while the ledger is marked: clears the mark when its volume has
    /// `SQLiteWriteHealth.spaceNeeded` bytes free, the file may still grow (`page_count` below
    /// `max_page_count`), and a one-page transaction (the header's `user_version`, rewritten as it is)
    /// commits to the disk.
    func probeCommits() -> Bool {
        guard database.isOpen, space.freeBytes(at: directory) >= SQLiteWriteHealth.spaceNeeded else { return false }
        do throws(SQLiteError) {
            let pages = try database.query("PRAGMA page_count").first?.first?.integer ?? 0
            let limit = try database.query("PRAGMA max_page_count").first?.first?.integer ?? .max
            guard pages < limit else { return false }
            let version = schemaVersion
            try database.transaction { () throws(SQLiteError) in try database.execute("PRAGMA user_version = \(version)") }
        } catch {
            return false
        }
        writeHealth.clear()
        return true
    }

    private func scheduleProbe() {
        queue.asyncAfter(deadline: .now() + SQLiteWriteHealth.probeInterval) { [weak self] in self?.probeTick() }
    }

    /// The periodic probe: stops once the mark is cleared (by this probe or `/healthz`'s) or the ledger closed.
    private func probeTick() {
        guard !closed.withLock({ $0 }), writeHealth.failure != nil, !probeCommits() else {
            writeHealth.stopProbing()
            return
        }
        scheduleProbe()
    }
}
