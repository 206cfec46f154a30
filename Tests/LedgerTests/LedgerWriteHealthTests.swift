import Foundation
import Ledger
import Platform
import Synchronization
import Testing

/// A SQLite ledger whose writes fail for a storage reason is marked unwritable (`health.up` false, the failure
/// kept) until a write probe commits; a busy lock held by another connection marks nothing. The page limit
/// (`PRAGMA max_page_count` on the ledger's own connection) makes SQLite fail writes with `SQLITE_FULL` for real.
@Suite struct LedgerWriteHealthTests {
    /// A volume whose free space the test sets.
    final class Volume: VolumeSpace {
        let free = Atomic<Int64>(1 << 40)

        func freeBytes(at path: String) -> Int64 { free.load(ordering: .relaxed) }
        func totalBytes(at path: String) -> Int64 { 1 << 40 }
    }

    /// Caps the file at its current size and records a batch that needs new pages: it fails with `SQLITE_FULL`.
    static func fill(_ ledger: Ledger, tag: String) async throws {
        let pages = try #require(try await ledger.pragma("page_count"))
        #expect(try await ledger.pragma("max_page_count = \(pages)") == pages)
        let batch = (0..<200).map { LedgerFixture.purchase("\(tag)-\($0)") }
        await #expect {
            _ = try await ledger.record(batch, account: "alice", policy: .transfer, now: LedgerFixture.now)
        } throws: { error in
            guard case .writeFailed(let message) = error as? LedgerError else { return false }
            return message.contains("database or disk is full")
        }
    }

    @Test func aFullLedgerStaysUnwritableUntilItCanGrowAndItsVolumeHasRoom() async throws {
        try await LedgerFixture.withPath { path in
            let volume = Volume()
            let ledger = try await Ledger.open(at: path, space: volume)
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            #expect(ledger.health.up && ledger.health.writeFailure == nil)
            #expect(await ledger.checkWritable())

            try await Self.fill(ledger, tag: "a")
            #expect(!ledger.health.up)
            #expect(ledger.health.writeFailure?.contains("database or disk is full") == true, "\(ledger.health)")
            // The rolled-back probe alone would pass here: it needs no new page.
            #expect(await !ledger.checkWritable())
            #expect(!ledger.health.up)

            // The file may grow again, but its volume has no room yet.
            volume.free.store((1 << 20) - 1, ordering: .relaxed) // just under the 1 MiB the probe asks for
            _ = try await ledger.pragma("max_page_count = 1000000")
            #expect(await !ledger.checkWritable())
            #expect(!ledger.health.up)

            // Space back: the probe commits and the mark goes; writes go through.
            volume.free.store(1 << 40, ordering: .relaxed)
            #expect(await ledger.checkWritable())
            #expect(ledger.health.up && ledger.health.writeFailure == nil)
            let batch = (0..<200).map { LedgerFixture.purchase("b-\($0)") }
            _ = try await ledger.record(batch, account: "alice", policy: .transfer, now: LedgerFixture.now)
            #expect(ledger.health.up)
            await ledger.close()
        }
    }

    /// Nobody asks `/healthz`: the ledger's own periodic probe clears the mark once writes work again.
    @Test func thePeriodicProbeClearsTheMarkWithoutAHealthCheck() async throws {
        try await LedgerFixture.withPath { path in
            let ledger = try await Ledger.open(at: path)
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            try await Self.fill(ledger, tag: "a")
            #expect(!ledger.health.up)
            _ = try await ledger.pragma("max_page_count = 1000000")
            let waited = await LedgerFixture.waitUntil(timeout: .seconds(10)) { ledger.health.up }
            #expect(waited != nil, "still marked: \(ledger.health)")
            #expect(ledger.health.writeFailure == nil)

            // Marked again later, the probe starts again.
            try await Self.fill(ledger, tag: "b")
            #expect(!ledger.health.up)
            _ = try await ledger.pragma("max_page_count = 1000000")
            #expect(await LedgerFixture.waitUntil(timeout: .seconds(10)) { ledger.health.up } != nil, "\(ledger.health)")
            await ledger.close()
        }
    }

    /// Another connection holding the write lock past the busy timeout fails the write, but the file can be
    /// written: nothing is marked, and the health probe says writable.
    @Test func aBusyLockIsNotALedgerThatCannotBeWritten() async throws {
        try await LedgerFixture.withPath { path in
            let ledger = try await Ledger.open(at: path)
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            _ = try await ledger.pragma("busy_timeout = 50")
            let other = try SQLiteDatabase(path: path)
            try other.execute("BEGIN IMMEDIATE")
            await #expect {
                _ = try await ledger.record([LedgerFixture.purchase("2")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            } throws: { error in
                guard case .writeFailed(let message) = error as? LedgerError else { return false }
                return message.contains("locked")
            }
            #expect(ledger.health.up && ledger.health.writeFailure == nil, "\(ledger.health)")
            #expect(await ledger.checkWritable())
            try other.execute("ROLLBACK")
            other.close()
            _ = try await ledger.record([LedgerFixture.purchase("2")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            await ledger.close()
        }
    }
}
