import Foundation
import Testing
import Ledger

@Suite struct LedgerOutboxTests {
    static func entry(_ key: String, order: String = "p1", queue: OutboxQueue = .webhook, at seconds: Double = 0) -> OutboxEntry {
        OutboxEntry(queue: queue, key: key, orderingKey: order, payload: "{\"k\":\"\(key)\"}",
                    created: LedgerFixture.now.addingTimeInterval(seconds), deadline: LedgerFixture.day(1))
    }

    @Test(arguments: LedgerBackend.allCases)
    func aKeyIsQueuedOnceAndItemsGoInOrderPerOrderingKey(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            #expect(try await ledger.enqueue([Self.entry("a1"), Self.entry("a2"), Self.entry("b1", order: "p2")]) == 3)
            #expect(try await ledger.enqueue([Self.entry("a1")]) == 0)
            #expect(try await ledger.pendingOutboxCount(queue: .webhook) == 3)
            #expect(try await ledger.pendingOutboxCount(queue: .consumption) == 0)

            let now = LedgerFixture.now.addingTimeInterval(1)
            let first = try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now, lease: 30, limit: 10)
            // a2 waits behind a1; b1 is first of its own key.
            #expect(first.map(\.entry.key) == ["a1", "b1"])
            #expect(first[0].entry == Self.entry("a1"))
            #expect(first[0].state == .pending)
            // Claimed items are not handed out again to their owner.
            #expect(try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now, lease: 30, limit: 10).isEmpty)

            try await ledger.finishOutbox(id: first[0].id, state: .sent, now: now)
            try await ledger.retryOutbox(id: first[1].id, nextAttempt: now.addingTimeInterval(60), error: "HTTP 500")
            let second = try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now, lease: 30, limit: 10)
            #expect(second.map(\.entry.key) == ["a2"])
            // A claim that lapsed (a sender that never came back) is handed out again.
            let again = try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now.addingTimeInterval(31), lease: 30, limit: 10)
            #expect(again.map(\.entry.key) == ["a2"])
            try await ledger.finishOutbox(id: again[0].id, state: .sent, now: now)
            let later = try await ledger.claimOutbox(queue: .webhook, owner: "me", now: now.addingTimeInterval(61), lease: 30, limit: 10)
            #expect(later.map(\.entry.key) == ["b1"])
            #expect(later.first?.attempts == 1)

            try await ledger.finishOutbox(id: later[0].id, state: .abandoned, now: now, error: "deadline passed")
            let items = try await ledger.outboxItems(queue: .webhook, orderingKey: "p2")
            #expect(items.map(\.state) == [.abandoned])
            #expect(items.first?.lastError == "deadline passed")
            #expect(items.first?.attempts == 2)
            #expect(items.first?.finished == now)
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").map(\.state) == [.sent, .sent])
            #expect(try await ledger.pendingOutboxCount(queue: .webhook) == 0)
            // A finished key is never queued again.
            #expect(try await ledger.enqueue([Self.entry("a1")]) == 0)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func itemsNotYetCreatedAreNotDue(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            try await ledger.enqueue([Self.entry("c", queue: .consumption, at: 100)])
            #expect(try await ledger.claimOutbox(queue: .consumption, owner: "me", now: LedgerFixture.now, lease: 30, limit: 5).isEmpty)
            #expect(try await ledger.claimOutbox(queue: .webhook, owner: "me", now: LedgerFixture.day(1), lease: 30, limit: 5).isEmpty)
            let due = try await ledger.claimOutbox(queue: .consumption, owner: "me", now: LedgerFixture.day(1), lease: 30, limit: 5)
            #expect(due.map(\.entry.key) == ["c"])
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func theQueueSurvivesAReopenAndAClaimOfAGoneProcessIsTakenOver(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let first = try await target.open()
            try await first.enqueue([Self.entry("x")])
            #expect(try await first.claimOutbox(queue: .webhook, owner: "old", now: LedgerFixture.now, lease: 30, limit: 1).count == 1)
            await first.close()
            let second = try await target.open()
            let soon = try await second.claimOutbox(queue: .webhook, owner: "new", now: LedgerFixture.now.addingTimeInterval(1), lease: 30, limit: 1)
            switch backend {
            case .sqlite:
                // One process per file: the old owner is gone.
                #expect(soon.map(\.entry.key) == ["x"])
            case .postgres:
                // Another instance may still be sending it: wait for its lease.
                #expect(soon.isEmpty)
                let lapsed = try await second.claimOutbox(queue: .webhook, owner: "new", now: LedgerFixture.now.addingTimeInterval(31), lease: 30, limit: 1)
                #expect(lapsed.map(\.entry.key) == ["x"])
            }
            await second.close()
        }
    }

    @Test func instancesClaimingAtOnceNeverShareAnItem() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let ledgers = [try await target.open(), try await target.open(), try await target.open()]
            try await ledgers[0].enqueue((0..<30).map { Self.entry("e\($0)", order: "p\($0)") })
            let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
                for (index, ledger) in ledgers.enumerated() {
                    group.addTask {
                        try await ledger.claimOutbox(queue: .webhook, owner: "i\(index)", now: LedgerFixture.now, lease: 30, limit: 30)
                            .map(\.entry.key)
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(claimed.count == 30)
            #expect(Set(claimed).count == 30)
            for ledger in ledgers { await ledger.close() }
        }
    }
}
