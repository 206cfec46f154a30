import Foundation
import Testing
import Ledger

/// The support view's reads and decisions, on both backends.
@Suite struct LedgerPurchaseRecordTests {
    /// Records a support decision the way the server does: the planned change through `apply`.
    static func decide(_ ledger: Ledger, _ decision: SupportDecision, _ original: String, now: Date) async throws -> (applied: Bool, purchase: PurchaseRecord?) {
        guard let change = try await ledger.supportChange(decision, originalTransactionID: original, now: now) else { return (false, nil) }
        guard !change.isEmpty else { return (false, change.purchase) }
        let applied = try await ledger.apply(notificationID: change.notificationID, type: change.type, revoke: change.revoke,
                                             restore: change.restore, by: RevocationAuthority.admin.rawValue, now: now)
        return (applied, try await ledger.purchase(transactionID: original))
    }

    @Test(arguments: LedgerBackend.allCases)
    func anyTransactionFindsItsPurchaseWithGrantsBindingsAndRevocations(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let renewals = [
                LedgerFixture.purchase("s1", original: "s1", product: "com.example.depot.pass", daysAgo: 60, expiresInDays: -30),
                LedgerFixture.purchase("s2", original: "s1", product: "com.example.depot.pass", daysAgo: 30, expiresInDays: 0),
            ]
            _ = try await ledger.record(renewals, account: "alice", policy: .transfer, now: LedgerFixture.day(-30))
            _ = try await ledger.apply(notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("s2", original: "s1")],
                                       restore: [], now: LedgerFixture.now)
            for id in ["s1", "s2"] {
                let record = try #require(try await ledger.purchase(transactionID: id))
                #expect(record.originalTransactionID == "s1")
                #expect(record.productID == "com.example.depot.pass")
                #expect(record.environment == "Production")
                #expect(record.purchased == LedgerFixture.day(-60))
                #expect(record.transactions.map(\.transactionID) == ["s1", "s2"])
                #expect(record.transactions.map(\.revocationDate) == [nil, LedgerFixture.now])
                #expect(record.accounts.map(\.account) == ["alice"])
                #expect(record.revocations == [RevocationRecord(transactionID: "s2", at: LedgerFixture.now, reason: "REFUND", by: .apple, restoredAt: nil)])
                #expect(record.revoked)
            }
            #expect(try await ledger.purchase(transactionID: "nope") == nil)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func anAccountsPurchasesComeNewestFirstInPagesWithoutRepeats(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            // 150 purchases, two of them bought at the same millisecond (the ID breaks the tie), and one of another account.
            let purchases = (0..<150).map { LedgerFixture.purchase("t\($0)", daysAgo: Double(150 - max($0, 1)) / 10) }
            for chunk in stride(from: 0, to: purchases.count, by: 50) {
                _ = try await ledger.record(Array(purchases[chunk..<chunk + 50]), account: "alice", policy: .transfer, now: LedgerFixture.now)
            }
            _ = try await ledger.record([LedgerFixture.purchase("other")], account: "bob", policy: .transfer, now: LedgerFixture.now)

            let first = try await ledger.purchases(account: "alice")
            #expect(first.purchases.count == 100)
            let cursor = try #require(first.next)
            let second = try await ledger.purchases(account: "alice", after: PurchaseCursor(encoded: cursor.encoded))
            #expect(second.purchases.count == 50)
            #expect(second.next == nil)
            let all = first.purchases + second.purchases
            #expect(Set(all.map(\.originalTransactionID)).count == 150)
            #expect(!all.contains { $0.originalTransactionID == "other" })
            let order = all.map { ($0.purchased, $0.originalTransactionID) }
            #expect(zip(order, order.dropFirst()).allSatisfy { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 > $1.1) })
            #expect(all.first?.originalTransactionID == "t149")
            #expect(Array(all.suffix(2).map(\.originalTransactionID)) == ["t1", "t0"])
            #expect(try await ledger.purchases(account: "carol") == PurchasePage(purchases: [], next: nil))
            #expect(try await ledger.purchases(account: "alice", limit: 500).purchases.count == 100)
        }
    }

    @Test func cursorsRoundTripAndForeignTextIsRefused() {
        let cursor = PurchaseCursor(purchasedMS: 1_796_083_200_123, originalTransactionID: "2000000123:x")
        #expect(PurchaseCursor(encoded: cursor.encoded) == cursor)
        #expect(cursor.encoded.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        for bad in ["", "%%%", "bm9jb2xvbg", "MTIz", "MTIzOg", String(repeating: "A", count: 2_000)] {
            #expect(PurchaseCursor(encoded: bad) == nil, "\(bad)")
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func aSupportRevokeCutsAccessOffOnceAndARestoreGivesItBack(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.day(-1))
            let revoked = try await Self.decide(ledger, .revoke, "1", now: LedgerFixture.now)
            #expect(revoked.applied)
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .revoked)
            let record = try #require(revoked.purchase)
            #expect(record.revoked)
            #expect(record.revocations == [RevocationRecord(transactionID: nil, at: LedgerFixture.now, reason: "support", by: .admin, restoredAt: nil)])

            // A second revoke records nothing and answers the same state.
            let again = try #require(try await ledger.supportChange(.revoke, originalTransactionID: "1", now: LedgerFixture.day(1)))
            #expect(again.isEmpty)
            #expect(again.purchase == record)

            let restored = try await Self.decide(ledger, .restore, "1", now: LedgerFixture.day(1))
            #expect(restored.applied)
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .allowed)
            #expect(restored.purchase?.revoked == false)
            #expect(restored.purchase?.revocations.map(\.restoredAt) == [LedgerFixture.day(1)])
            #expect(restored.purchase?.revocations.map(\.restoredBy) == [.admin])
            #expect(try #require(try await ledger.supportChange(.restore, originalTransactionID: "1", now: LedgerFixture.day(2))).isEmpty)

            // Revoked again later: a second revocation of its own, the first one kept as it was.
            #expect(try await Self.decide(ledger, .revoke, "1", now: LedgerFixture.day(2)).applied)
            let history = try #require(try await ledger.purchase(transactionID: "1")).revocations
            #expect(history.map(\.at) == [LedgerFixture.now, LedgerFixture.day(2)])
            #expect(history.map(\.restoredAt) == [LedgerFixture.day(1), nil])
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .revoked)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func aSupportRestoreLiftsApplesRefundTooAndUnknownPurchasesAreNil(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("r1", original: "o"), LedgerFixture.purchase("r2", original: "o", daysAgo: 0.5)],
                                        account: nil, policy: .transfer, now: LedgerFixture.now)
            _ = try await ledger.apply(notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("r2", original: "o")],
                                       restore: [], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "o", account: nil) == .revoked)
            // Already revoked (by Apple): a support revoke changes nothing.
            #expect(try #require(try await ledger.supportChange(.revoke, originalTransactionID: "o", now: LedgerFixture.now)).isEmpty)
            let restored = try await Self.decide(ledger, .restore, "o", now: LedgerFixture.day(1))
            #expect(restored.applied)
            #expect(ledger.access(originalTransactionID: "o", account: nil) == .allowed)
            #expect(restored.purchase?.revocations.map(\.by) == [.apple])
            #expect(restored.purchase?.revocations.map(\.restoredBy) == [.admin])
            #expect(restored.purchase?.transactions.map(\.revocationDate) == [nil, nil])
            // Only an original transaction ID names a purchase for a decision.
            #expect(try await ledger.supportChange(.revoke, originalTransactionID: "r2", now: LedgerFixture.now) == nil)
            #expect(try await ledger.supportChange(.revoke, originalTransactionID: "nope", now: LedgerFixture.now) == nil)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func aPurchaseCarriesItsDeliveryRecordConsumptionAnswersAndWhoRestoredIt(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("d1")], account: "ada", policy: .transfer, now: LedgerFixture.now)
            let chunks: [Range<Int64>] = [0..<100, 100..<200]
            _ = try await ledger.recordDeliveries([DeliverySpan(originalTransactionID: "d1", pack: "level2", version: 1, path: "stages.bin",
                                                                sent: ByteCoverage([0..<150]), chunks: chunks, sentAt: LedgerFixture.now)])
            let request = ConsumptionRequest(notificationUUID: "c-1", transactionId: "d1", originalTransactionId: "d1",
                                             productId: "com.example.depot.level2", environment: "Production",
                                             signedDate: 1_796_083_200_000)
            #expect(try await ledger.queueConsumptionAnswer(request, now: LedgerFixture.now))
            _ = try await ledger.apply(notificationID: "r", type: "REFUND", revoke: [LedgerFixture.revocation("d1")], restore: [], now: LedgerFixture.now)
            _ = try await ledger.apply(notificationID: "rr", type: "REFUND_REVERSED", revoke: [], restore: ["d1"], now: LedgerFixture.day(1))

            for record in [try await ledger.purchase(transactionID: "d1"), try await ledger.purchases(account: "ada").purchases.first] {
                let found = try #require(record)
                #expect(found.deliveries.map { [$0.pack, "\($0.version)", "\($0.chunks)", "\($0.deliveredBytes)", "\($0.sentBytes)"] }
                        == [["level2", "1", "1", "100", "150"]])
                #expect(found.consumptionAnswers.map(\.request) == [request])
                #expect(found.consumptionAnswers.map(\.state) == [.pending])
                #expect(found.revocations.map(\.restoredBy) == [.apple])
                #expect(!found.revoked)
            }
        }
    }

    /// The look-up by account reads an index on the account (schema SQLite 5, PostgreSQL 4), not every binding.
    @Test(arguments: LedgerBackend.allCases)
    func anAccountsPurchasesAreFoundThroughAnIndexOnTheAccount(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, target in
            _ = try await ledger.record([LedgerFixture.purchase("i1")], account: "ivy", policy: .transfer, now: LedgerFixture.now)
            switch backend {
            case .sqlite:
                let raw = try SQLiteDatabase(path: try #require(target.path), readOnly: true, create: false)
                defer { raw.close() }
                let plan = try raw.query("EXPLAIN QUERY PLAN SELECT original_transaction_id FROM account_bindings WHERE account = ?",
                                         [.text("ivy")]).compactMap { $0.last?.text }
                #expect(plan.contains { $0.contains("USING COVERING INDEX account_bindings_by_account (account=?)") }, "\(plan)")
            case .postgres:
                let raw = try await RawPostgresSession(target)
                let definition = try await raw.query("SELECT indexdef FROM pg_indexes WHERE indexname = 'account_bindings_by_account'")
                #expect(definition.first?.first??.hasSuffix("ON public.account_bindings USING btree (account, original_transaction_id)") == true,
                        "\(definition)")
            }
            #expect(try await ledger.purchases(account: "ivy").purchases.map(\.originalTransactionID) == ["i1"])
        }
    }
}
