import Foundation
import Testing
import Ledger

/// Access changes raise their events inside the write that makes them (`raiseAccessEvents`), whatever path
/// writes: a purchase recorded, a refund, a reversal, a support decision (`by: "admin"`).
@Suite struct LedgerAccessEventsTests {
    /// An entry naming the change in its key, its facts in its payload.
    static func entry(_ change: AccessChange) -> OutboxEntry? {
        OutboxEntry(queue: .webhook, key: "\(change.kind.rawValue):\(change.transactionID):\(change.cause):\(change.account ?? "-")",
                    orderingKey: change.originalTransactionID,
                    payload: "\(change.by)|\(change.reason ?? "-")|\(change.productID ?? "-")",
                    created: LedgerFixture.now, deadline: LedgerFixture.day(1))
    }

    @Test(arguments: LedgerBackend.allCases)
    func everyAccessChangeQueuesItsEventInTheSameWrite(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            // Nothing is raised before events are asked for.
            _ = try await ledger.record([LedgerFixture.purchase("p0")], account: "alice", policy: .first, now: LedgerFixture.now)
            ledger.raiseAccessEvents(Self.entry)
            _ = try await ledger.record([LedgerFixture.purchase("p1")], account: "alice", policy: .first, now: LedgerFixture.now)
            // The same purchase again, and another account refused under `first`: nothing new.
            _ = try await ledger.record([LedgerFixture.purchase("p1")], account: "alice", policy: .first, now: LedgerFixture.now)
            #expect(try await ledger.record([LedgerFixture.purchase("p1")], account: "bob", policy: .first, now: LedgerFixture.now)
                    == ["p1": .boundToOtherAccount])
            // A refund, then the same notification again.
            #expect(try await ledger.apply(notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("p1")], restore: [],
                                           now: LedgerFixture.now))
            #expect(try await !ledger.apply(notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("p1")], restore: [],
                                            now: LedgerFixture.now))
            // A purchase already revoked when it is presented is not granted.
            _ = try await ledger.record([LedgerFixture.purchase("p1")], account: nil, policy: .first, now: LedgerFixture.now)
            // Support restores it; restoring what is not revoked changes nothing and raises nothing.
            #expect(try await ledger.apply(notificationID: "admin:restore:p1", type: "ADMIN_RESTORE", revoke: [], restore: ["p1"],
                                           by: "admin", now: LedgerFixture.day(1)))
            #expect(try await ledger.apply(notificationID: "n2", type: "REFUND_REVERSED", revoke: [], restore: ["p1"],
                                           now: LedgerFixture.day(1)))
            let items = try await ledger.outboxItems(queue: .webhook, orderingKey: "p1")
            #expect(items.map(\.entry.key) == ["granted:p1:record:alice", "revoked:p1:n1:-", "restored:p1:admin:restore:p1:-"])
            #expect(items.map(\.entry.payload) == ["apple|-|com.example.depot.level2", "apple|REFUND|com.example.depot.level2",
                                                   "admin|ADMIN_RESTORE|com.example.depot.level2"])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "p0").isEmpty)
            #expect(ledger.access(originalTransactionID: "p1", account: "alice") == .allowed)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func aNotificationWithSeveralRevocationsAndRestorationsWritesAndRaisesEachOnce(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("m1", original: "a"), LedgerFixture.purchase("m2", original: "b")],
                                        account: nil, policy: .transfer, now: LedgerFixture.now)
            ledger.raiseAccessEvents(Self.entry)
            // m1 twice (the last revocation of it stays, as applying them in turn), m2, and x9 never recorded.
            #expect(try await ledger.apply(
                notificationID: "v1", type: "REFUND",
                revoke: [LedgerFixture.revocation("m1", original: "a"), LedgerFixture.revocation("m2", original: "b"),
                         LedgerFixture.revocation("x9", original: "x"), LedgerFixture.revocation("m1", original: "a", daysAgo: 1)],
                restore: [], now: LedgerFixture.now))
            for original in ["a", "b", "x"] { #expect(ledger.access(originalTransactionID: original, account: nil) == .revoked) }
            #expect(try await ledger.purchases(originalTransactionID: "a").map(\.revocationDate) == [LedgerFixture.day(-1)])
            #expect(try await ledger.purchases(originalTransactionID: "b").map(\.revocationDate) == [LedgerFixture.now])
            // Restoring m2, m1, one never revoked and m2 again, in one notification.
            #expect(try await ledger.apply(notificationID: "v2", type: "REFUND_REVERSED", revoke: [], restore: ["m2", "m1", "nope", "m2"],
                                           now: LedgerFixture.day(1)))
            #expect(ledger.access(originalTransactionID: "a", account: nil) == .allowed)
            #expect(ledger.access(originalTransactionID: "b", account: nil) == .allowed)
            #expect(ledger.access(originalTransactionID: "x", account: nil) == .revoked)
            #expect(try await ledger.purchases(originalTransactionID: "b").map(\.revocationDate) == [nil])
            let a = try await ledger.outboxItems(queue: .webhook, orderingKey: "a")
            #expect(a.map(\.entry.key) == ["revoked:m1:v1:-", "restored:m1:v2:-"])
            #expect(a.map(\.entry.payload) == ["apple|REFUND|com.example.depot.level2", "apple|REFUND_REVERSED|com.example.depot.level2"])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "b").map(\.entry.key) == ["revoked:m2:v1:-", "restored:m2:v2:-"])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "x").map(\.entry.payload) == ["apple|REFUND|-"])
        }
    }
}
