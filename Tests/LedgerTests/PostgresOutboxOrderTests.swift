import Foundation
import Synchronization
import Testing
import Ledger

/// On PostgreSQL the outbox hands out one purchase's items in commit order, one in flight at a time, although
/// IDs are given at insert (review item 11): an enqueue waits for another transaction queueing for the same key,
/// and a claim skips a key that has another item claimed.
@Suite struct PostgresOutboxOrderTests {
    static func entry(_ key: String, order: String = "p1") -> OutboxEntry {
        LedgerOutboxTests.entry(key, order: order)
    }

    /// A transaction that queued `first` and has not committed yet (a raw session running the ledger's own
    /// statement), an instance queueing `second` for the same purchase meanwhile, and claims by two instances.
    @Test func enqueuesForOneKeyCommitInIDOrderAndNeverTwoAreInFlight() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let (one, two) = (try await target.open(), try await target.open())
            let open = try await RawPostgresSession(target)
            try await open.execute("BEGIN")
            try await open.query(PostgresOutbox.enqueueStatement, PostgresOutbox.enqueueParameters([Self.entry("first")]))
            // Another purchase's enqueue is not held up by it.
            #expect(try await two.enqueue([Self.entry("other", order: "p2")]) == 1)
            let queued = Mutex(false)
            let second = Task {
                let added = try await two.enqueue([Self.entry("second")])
                queued.withLock { $0 = true }
                return added
            }
            // While the first is uncommitted, the second waits for it: nothing of p1 can be claimed out of order.
            try await Task.sleep(for: .milliseconds(500))
            let early = try await one.claimOutbox(queue: .webhook, owner: "one", now: LedgerFixture.now.addingTimeInterval(1),
                                                  lease: 30, limit: 10)
            #expect(early.map(\.entry.key) == ["other"])
            #expect(!queued.withLock { $0 }, "the second enqueue committed before the first")
            try await open.execute("COMMIT")
            #expect(try await second.value == 1)

            let now = LedgerFixture.now.addingTimeInterval(2)
            let firstClaim = try await one.claimOutbox(queue: .webhook, owner: "one", now: now, lease: 30, limit: 10)
            #expect(firstClaim.map(\.entry.key) == ["first"])
            let items = try await one.outboxItems(queue: .webhook, orderingKey: "p1")
            #expect(items.map(\.entry.key) == ["first", "second"], "IDs follow the commit order")
            // The other instance gets nothing of p1 while "first" is in flight.
            #expect(try await two.claimOutbox(queue: .webhook, owner: "two", now: now, lease: 30, limit: 10).isEmpty)
            try await one.finishOutbox(id: firstClaim[0].id, state: .sent, now: now)
            let next = try await two.claimOutbox(queue: .webhook, owner: "two", now: now, lease: 30, limit: 10)
            #expect(next.map(\.entry.key) == ["second"])
            await one.close()
            await two.close()
        }
    }

    /// An item claimed (unexpired) holds back every other item of its key, even an older one that appeared after
    /// it was claimed (rows committed out of order before this ledger serialized enqueues).
    @Test func aClaimedItemHoldsBackItsKeyUntilItsClaimLapses() async throws {
        try await LedgerFixture.withLedger(.postgres) { ledger, target in
            #expect(try await ledger.enqueue([Self.entry("older"), Self.entry("newer")]) == 2)
            let raw = try await RawPostgresSession(target)
            let claimUntil = LedgerTime.milliseconds(LedgerFixture.now.addingTimeInterval(30))
            try await raw.query("UPDATE outbox SET claimed_by = 'elsewhere', claim_expires_ms = $1 WHERE key = 'newer'",
                                [.integer(claimUntil)])
            let now = LedgerFixture.now.addingTimeInterval(1)
            #expect(try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now, lease: 30, limit: 10).isEmpty)
            // Once that claim lapses, the key's first pending item goes.
            let later = try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now.addingTimeInterval(30), lease: 30, limit: 10)
            #expect(later.map(\.entry.key) == ["older"])
        }
    }
}
