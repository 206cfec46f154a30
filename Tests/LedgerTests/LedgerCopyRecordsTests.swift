import Foundation
import Testing
import Ledger

/// `Ledger.copy` moves the delivery record and the outbox too (app-store-server-api §7, §8), so a deployment
/// that grows into several instances keeps what it knows of deliveries and what it still has to send.
@Suite struct LedgerCopyRecordsTests {
    static func outboxEntry(_ key: String, order: String, queue: OutboxQueue = .webhook) -> OutboxEntry {
        OutboxEntry(queue: queue, key: key, orderingKey: order, payload: "{\"k\":\"\(key)\"}",
                    created: LedgerFixture.now, deadline: LedgerFixture.day(1))
    }

    @Test func copyMovesDeliveriesAndTheOutboxAndRunningItAgainAddsNothing() async throws {
        try await LedgerFixture.withTarget(.sqlite) { source in
            let sqlite = try await source.open()
            // One file with its version's totals (they move too).
            var withTotals = LedgerDeliveryTests.span([0..<250], path: "README.txt", at: 1)
            withTotals.versionTotals = LedgerVersionTotalsTests.totals
            _ = try await sqlite.recordDeliveries([
                LedgerDeliveryTests.span([0..<150]),
                withTotals,
                LedgerDeliveryTests.span([0..<100], original: "2"),
            ])
            #expect(try await sqlite.enqueue([
                Self.outboxEntry("e1", order: "1"), Self.outboxEntry("e2", order: "1"), Self.outboxEntry("e3", order: "2"),
                Self.outboxEntry("c1", order: "1", queue: .consumption),
            ]) == 4)
            let claimed = try await sqlite.claimOutbox(queue: .webhook, owner: "old", now: LedgerFixture.now, lease: 60, limit: 10)
            #expect(claimed.map(\.entry.key) == ["e1", "e3"])
            try await sqlite.finishOutbox(id: claimed[0].id, state: .sent, now: LedgerFixture.now, outcome: "{\"answer\":1}")
            try await sqlite.retryOutbox(id: claimed[1].id, nextAttempt: LedgerFixture.now.addingTimeInterval(5), error: "HTTP 500")
            let expectedDeliveries = [try await sqlite.deliveries(originalTransactionID: "1"),
                                      try await sqlite.deliveries(originalTransactionID: "2")]
            #expect(expectedDeliveries[0].map(\.versionTotals) == [LedgerVersionTotalsTests.totals, nil])
            let expectedItems = [try await sqlite.outboxItems(queue: .webhook, orderingKey: "1"),
                                 try await sqlite.outboxItems(queue: .webhook, orderingKey: "2"),
                                 try await sqlite.outboxItems(queue: .consumption, orderingKey: "1")]

            try await LedgerFixture.withTarget(.postgres) { target in
                let report = try await Ledger.copy(from: source.location, to: target.location, dataDirectory: source.dataDirectory)
                // Three files with 1 + 3 + 1 chunks sent whole; four outbox items.
                #expect(report.deliveries == 3 + 5)
                #expect(report.outbox == 4)
                let copied = try await target.open()
                #expect([try await copied.deliveries(originalTransactionID: "1"),
                         try await copied.deliveries(originalTransactionID: "2")] == expectedDeliveries)
                let items = [try await copied.outboxItems(queue: .webhook, orderingKey: "1"),
                             try await copied.outboxItems(queue: .webhook, orderingKey: "2"),
                             try await copied.outboxItems(queue: .consumption, orderingKey: "1")]
                // Same entries, states, attempts and errors (the IDs are PostgreSQL's own, in the same order).
                func withoutIDs(_ lists: [[OutboxItem]]) -> [[OutboxItem]] {
                    lists.map { $0.map { var item = $0; item.id = 0; return item } }
                }
                #expect(withoutIDs(items) == withoutIDs(expectedItems))
                #expect(items[0].map(\.state) == [.sent, .pending])
                #expect(items[0].map(\.outcome) == ["{\"answer\":1}", nil])
                #expect(items[0][0].id < items[0][1].id)
                // Claims are not copied: the pending items are due for the new owner, first in line per purchase.
                let due = try await copied.claimOutbox(queue: .webhook, owner: "new", now: LedgerFixture.now.addingTimeInterval(10),
                                                       lease: 60, limit: 10)
                #expect(due.map(\.entry.key) == ["e2", "e3"])
                // Delivering continues on the copied record: the rest of chunk 1 completes it.
                let progress = try await copied.recordDeliveries([LedgerDeliveryTests.span([150..<200], at: 2)])
                #expect(progress == [DeliveryProgress(originalTransactionID: "1", pack: "level2", version: 1, newChunks: 1)])

                let again = try await Ledger.copy(from: source.location, to: target.location, dataDirectory: source.dataDirectory)
                #expect(again.total == 0)
                await copied.close()
            }
            await sqlite.close()
        }
    }
}
