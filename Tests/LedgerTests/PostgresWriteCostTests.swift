import Foundation
import Testing
import Ledger

/// What a write costs PostgreSQL (issue 10's notification rate): round trips per notification, who sends the
/// change feeds' `NOTIFY`, and a feed read that stays index lookups whatever the ledger's size.
@Suite struct PostgresWriteCostTests {
    /// The round trips the pool's one connection has made so far.
    static func roundTrips(_ ledger: Ledger) async throws -> Int {
        let pool = try #require(ledger.postgresPool)
        return try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in connection.roundTrips }
    }

    @Test func aRefundCostsFiveRoundTripsAndARedeliveryThree() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let ledger = try await target.open(poolSize: 1)
            for number in 0..<3 {
                _ = try await ledger.record([LedgerFixture.purchase("b\(number)")], account: "alice", policy: .first, now: LedgerFixture.now)
            }
            // The first refund prepares its statements (once per connection).
            _ = try await ledger.apply(notificationID: "warm", type: "REFUND", revoke: [LedgerFixture.revocation("b0")], restore: [],
                                       now: LedgerFixture.now)
            let before = try await Self.roundTrips(ledger)
            #expect(try await ledger.apply(notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("b1")], restore: [],
                                           now: LedgerFixture.now))
            let refund = try await Self.roundTrips(ledger) - before
            // BEGIN, the notification's row, the original's lock and mark, the revocation, COMMIT.
            #expect(refund <= 5, "a refund took \(refund) round trips")
            #expect(try await !ledger.apply(notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("b1")], restore: [],
                                            now: LedgerFixture.now))
            let redelivery = try await Self.roundTrips(ledger) - before - refund
            #expect(redelivery <= 3, "a redelivery took \(redelivery) round trips")
            // Several revocations in one notification cost no more than one.
            let next = try await Self.roundTrips(ledger)
            _ = try await ledger.apply(notificationID: "n2", type: "REFUND",
                                       revoke: [LedgerFixture.revocation("b2"), LedgerFixture.revocation("x1", original: "x"),
                                                LedgerFixture.revocation("x2", original: "x")], restore: [], now: LedgerFixture.now)
            #expect(try await Self.roundTrips(ledger) - next <= 5)
            #expect(ledger.access(originalTransactionID: "b1", account: "alice") == .revoked)
            #expect(ledger.access(originalTransactionID: "x", account: nil) == .revoked)
            await ledger.close()
        }
    }

    @Test func writesSendNoNotifyTheirFeedAnnouncesThemAndIgnoresItsOwn() async throws {
        try await PostgresInstancesTests.withTwoInstances { a, b, target in
            let listener = try await RawPostgresSession(target)
            try await listener.execute("LISTEN \(PostgresLedgerStore.channel)")
            _ = try await a.record([LedgerFixture.purchase("w1")], account: "alice", policy: .first, now: LedgerFixture.now)
            _ = try await a.apply(notificationID: "w1", type: "REFUND", revoke: [LedgerFixture.revocation("w1")], restore: [],
                                  now: LedgerFixture.now)
            let seen = await LedgerFixture.waitUntil(timeout: .seconds(5)) {
                b.access(originalTransactionID: "w1", account: "alice") == .revoked
            }
            #expect(seen != nil)
            var received: [PostgresNotification] = []
            let clock = ContinuousClock()
            let start = clock.now
            while received.count < 2, clock.now - start < .seconds(10) {
                received += try await listener.notifications()
                try await Task.sleep(for: .milliseconds(5))
            }
            let feeds = try await listener.backendPIDs(application: "depot-ledger-feed")
            let pools = try await listener.backendPIDs(application: "depot-ledger")
            #expect(feeds.count == 2 && !pools.isEmpty)
            // The binding and the refund each made A's feed announce; no pooled (writing) session sent one.
            #expect(received.count >= 2, "\(received)")
            #expect(received.allSatisfy { feeds.contains($0.senderPID) }, "senders \(received.map(\.senderPID)), feeds \(feeds)")
            #expect(!received.contains { pools.contains($0.senderPID) })
            // B counts A's announcements; A, which sent them, counts none.
            #expect(b.propagation.notifications >= 2)
            #expect(a.propagation.notifications == 0)
        }
    }

    @Test func theFeedsReadIsIndexLookupsWhateverTheLedgersSize() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let ledger = try await target.open(poolSize: 1)
            await ledger.close()
            let raw = try await RawPostgresSession(target)
            // 5,000 originals with a purchase each, every other one revoked, a binding each, marked long ago.
            try await raw.execute(
                """
                INSERT INTO transactions SELECT 't' || n, 'o' || n, 'p', 'Production', n, NULL, NULL, 'jws', n, n
                    FROM generate_series(1, 5000) AS n;
                INSERT INTO original_transactions SELECT 'o' || n, '1'::xid8 FROM generate_series(1, 5000) AS n;
                INSERT INTO revocations SELECT 't' || n, 'o' || n, n, 'REFUND', NULL FROM generate_series(2, 5000, 2) AS n;
                INSERT INTO account_bindings SELECT 'o' || n, 'a' || n, n FROM generate_series(1, 5000) AS n;
                SET plan_cache_mode = force_generic_plan;
                SET jit = off;
                """)
            try await raw.execute("PREPARE poll(text) AS " + PostgresAccessReader.statement(PostgresAccessReader.changedCandidates))
            for analyzed in [false, true] {
                if analyzed { try await raw.execute("ANALYZE") }
                let plan = try await raw.query("EXPLAIN EXECUTE poll('5')").compactMap { $0[0] }.joined(separator: "\n")
                for table in ["original_transactions", "transactions", "revocations", "account_bindings"] {
                    #expect(!plan.contains("Seq Scan on \(table) "), "analyzed \(analyzed): a poll reads all of \(table):\n\(plan)")
                }
            }
        }
    }
}
