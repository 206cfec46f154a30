import Foundation
import Testing
import Ledger

@Suite struct LedgerAccountPolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let policy: AccountPolicy
        let secondDecision: BindingDecision
        let firstAccess: AccessState
        let secondAccess: AccessState
        var testDescription: String { policy.rawValue }
    }

    // spec §3 `--account-policy`: alice presents the purchase, then bob presents it.
    static let cases: [Case] = [
        Case(policy: .transfer, secondDecision: .granted, firstAccess: .transferred, secondAccess: .allowed),
        Case(policy: .first, secondDecision: .boundToOtherAccount, firstAccess: .allowed, secondAccess: .transferred),
        Case(policy: .shared, secondDecision: .granted, firstAccess: .allowed, secondAccess: .allowed),
    ]

    @Test(arguments: LedgerBackend.allCases, cases)
    func secondAccountPresentingABoundPurchase(_ backend: LedgerBackend, _ test: Case) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, target in
            let purchase = LedgerFixture.purchase("1000", original: "500")
            let first = try await ledger.record([purchase], account: "alice", policy: test.policy, now: LedgerFixture.now)
            #expect(first == ["500": .granted])
            let second = try await ledger.record([purchase], account: "bob", policy: test.policy, now: LedgerFixture.now)
            #expect(second == ["500": test.secondDecision])
            #expect(ledger.access(originalTransactionID: "500", account: "alice") == test.firstAccess)
            #expect(ledger.access(originalTransactionID: "500", account: "bob") == test.secondAccess)
            #expect(ledger.access(originalTransactionID: "500", account: nil) == .allowed)

            // The bindings are in the database, not only in memory.
            await ledger.close()
            let reopened = try await target.open()
            #expect(reopened.access(originalTransactionID: "500", account: "alice") == test.firstAccess)
            #expect(reopened.access(originalTransactionID: "500", account: "bob") == test.secondAccess)
            await reopened.close()
        }
    }

    @Test(arguments: LedgerBackend.allCases, AccountPolicy.allCases)
    func sameAccountAgainIsGranted(_ backend: LedgerBackend, _ policy: AccountPolicy) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            for _ in 0..<2 {
                let decisions = try await ledger.record(
                    [LedgerFixture.purchase("1")], account: "alice", policy: policy, now: LedgerFixture.now)
                #expect(decisions == ["1": .granted])
            }
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .allowed)
        }
    }

    @Test(arguments: LedgerBackend.allCases, AccountPolicy.allCases)
    func noAccountBindsNothingAndIsAlwaysGranted(_ backend: LedgerBackend, _ policy: AccountPolicy) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: policy, now: LedgerFixture.now)
            let decisions = try await ledger.record(
                [LedgerFixture.purchase("1"), LedgerFixture.purchase("2")], account: nil, policy: policy, now: LedgerFixture.now)
            #expect(decisions == ["1": .granted, "2": .granted])
            #expect(ledger.access(originalTransactionID: "2", account: "anyone") == .allowed)
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .allowed)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func transferBackReturnsTheOriginalToTheFirstAccount(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let purchase = [LedgerFixture.purchase("1")]
            for account in ["alice", "bob", "alice"] {
                _ = try await ledger.record(purchase, account: account, policy: .transfer, now: LedgerFixture.now)
            }
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .allowed)
            #expect(ledger.access(originalTransactionID: "1", account: "bob") == .transferred)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func transferAfterSharedLeavesOnlyTheNewOwner(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let purchase = [LedgerFixture.purchase("1")]
            _ = try await ledger.record(purchase, account: "alice", policy: .shared, now: LedgerFixture.now)
            _ = try await ledger.record(purchase, account: "bob", policy: .shared, now: LedgerFixture.now)
            _ = try await ledger.record(purchase, account: "carol", policy: .transfer, now: LedgerFixture.now)
            for (account, state) in [("alice", AccessState.transferred), ("bob", .transferred), ("carol", .allowed)] {
                #expect(ledger.access(originalTransactionID: "1", account: account) == state)
            }
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func firstPolicyStillRecordsThePurchaseData(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .first, now: LedgerFixture.now)
            let renewal = LedgerFixture.purchase("2", original: "1", daysAgo: 0)
            let decisions = try await ledger.record([renewal], account: "bob", policy: .first, now: LedgerFixture.now)
            #expect(decisions == ["1": .boundToOtherAccount])
            #expect(try await ledger.purchases(originalTransactionID: "1").map(\.transactionID) == ["1", "2"])
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func oneDecisionPerOriginalTransaction(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("a")], account: "alice", policy: .first, now: LedgerFixture.now)
            let decisions = try await ledger.record(
                [LedgerFixture.purchase("a"), LedgerFixture.purchase("a2", original: "a", daysAgo: 0), LedgerFixture.purchase("b")],
                account: "bob", policy: .first, now: LedgerFixture.now)
            #expect(decisions == ["a": .boundToOtherAccount, "b": .granted])
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func neverSeenOriginalIsAllowed(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            #expect(ledger.access(originalTransactionID: "operator-grant", account: "alice") == .allowed)
            #expect(ledger.access(originalTransactionID: "operator-grant", account: nil) == .allowed)
        }
    }
}
