import Foundation
import Testing
import Ledger

@Suite struct LedgerRevocationTests {
    @Test(arguments: LedgerBackend.allCases)
    func refundRevokesAndRefundReversedRestores(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            let revoked = try await ledger.apply(
                notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.now)
            #expect(revoked)
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .revoked)
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .revoked)
            #expect(try await ledger.purchases(originalTransactionID: "1").first?.revocationDate == LedgerFixture.now)

            let restored = try await ledger.apply(
                notificationID: "n2", type: "REFUND_REVERSED", revoke: [], restore: ["1"], now: LedgerFixture.day(1))
            #expect(restored)
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .allowed)
            #expect(try await ledger.purchases(originalTransactionID: "1").first?.revocationDate == nil)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func revokedBeatsTransferred(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            _ = try await ledger.apply(
                notificationID: "n", type: "REVOKE", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "1", account: "bob") == .revoked)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func refundedOldRenewalDoesNotCutOffALaterRenewal(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let renewals = [
                LedgerFixture.purchase("r1", original: "s", daysAgo: 60, expiresInDays: -30),
                LedgerFixture.purchase("r2", original: "s", daysAgo: 30, expiresInDays: 0),
                LedgerFixture.purchase("r3", original: "s", daysAgo: 0, expiresInDays: 30),
            ]
            _ = try await ledger.record(renewals, account: nil, policy: .transfer, now: LedgerFixture.now)
            _ = try await ledger.apply(
                notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("r2", original: "s")],
                restore: [], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "s", account: nil) == .allowed)

            // Refunding the latest renewal cuts the subscription off.
            _ = try await ledger.apply(
                notificationID: "n2", type: "REFUND", revoke: [LedgerFixture.revocation("r3", original: "s")],
                restore: [], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "s", account: nil) == .revoked)

            // A renewal bought after the refund gives access back.
            let r4 = LedgerFixture.purchase("r4", original: "s", daysAgo: -1, expiresInDays: 31)
            _ = try await ledger.record([r4], account: nil, policy: .transfer, now: LedgerFixture.day(1))
            #expect(ledger.access(originalTransactionID: "s", account: nil) == .allowed)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func revocationOfANeverSeenTransactionCountsAtItsRevocationDate(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            // The notification arrives before any receipt: the original is revoked.
            _ = try await ledger.apply(
                notificationID: "n1", type: "REFUND", revoke: [LedgerFixture.revocation("x9", original: "x", daysAgo: 2)],
                restore: [], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "x", account: nil) == .revoked)
            // An older renewal seen later does not lift it; one bought after the revocation does.
            _ = try await ledger.record(
                [LedgerFixture.purchase("x1", original: "x", daysAgo: 40)], account: nil, policy: .transfer, now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "x", account: nil) == .revoked)
            _ = try await ledger.record(
                [LedgerFixture.purchase("x2", original: "x", daysAgo: 1)], account: nil, policy: .transfer, now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "x", account: nil) == .allowed)
        }
    }

    @Test(arguments: LedgerBackend.allCases, LedgerPurchase.Source.allCases)
    func purchaseArrivingWithARevocationDateIsRevoked(_ backend: LedgerBackend, _ source: LedgerPurchase.Source) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, target in
            let refunded = LedgerFixture.purchase("1", revokedDaysAgo: 0.5, source: source)
            _ = try await ledger.record([refunded], account: "alice", policy: .transfer, now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .revoked)
            #expect(try await ledger.purchases(originalTransactionID: "1") == [refunded])

            await ledger.close()
            let reopened = try await target.open()
            #expect(reopened.access(originalTransactionID: "1", account: "alice") == .revoked)
            await reopened.close()
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func staleReceiptDoesNotUndoARestore(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let refunded = LedgerFixture.purchase("1", revokedDaysAgo: 0.5)
            _ = try await ledger.record([refunded], account: nil, policy: .transfer, now: LedgerFixture.now)
            _ = try await ledger.apply(notificationID: "n", type: "REFUND_REVERSED", revoke: [], restore: ["1"], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .allowed)
            // A cached receipt from before the reversal still carries the cancellation date.
            _ = try await ledger.record([refunded], account: nil, policy: .transfer, now: LedgerFixture.day(1))
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .allowed)
            // A receipt without it does not lift a revocation in force either.
            _ = try await ledger.apply(
                notificationID: "n2", type: "REVOKE", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.day(2))
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: nil, policy: .transfer, now: LedgerFixture.day(3))
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .revoked)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func notificationIsAppliedOnlyOnce(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: nil, policy: .transfer, now: LedgerFixture.now)
            #expect(try await ledger.apply(
                notificationID: "uuid-1", type: "REFUND", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.now))
            _ = try await ledger.apply(notificationID: "uuid-2", type: "REFUND_REVERSED", revoke: [], restore: ["1"], now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .allowed)
            let before = try await ledger.purchases(originalTransactionID: "1")

            // Apple redelivers the REFUND: nothing changes, the restore stays.
            let again = try await ledger.apply(
                notificationID: "uuid-1", type: "REFUND", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.day(1))
            #expect(!again)
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .allowed)
            #expect(try await ledger.purchases(originalTransactionID: "1") == before)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func otherNotificationTypesAreRecordedWithoutChanges(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let first = try await ledger.apply(notificationID: "t", type: "DID_RENEW", revoke: [], restore: [], now: LedgerFixture.now)
            let second = try await ledger.apply(notificationID: "t", type: "DID_RENEW", revoke: [], restore: [], now: LedgerFixture.now)
            #expect(first && !second)
            #expect(ledger.indexedCount == 0)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func restoringATransactionNeverRevokedChangesNothing(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: nil, policy: .transfer, now: LedgerFixture.now)
            #expect(try await ledger.apply(notificationID: "n", type: "REFUND_REVERSED", revoke: [], restore: ["1", "nope"], now: LedgerFixture.now))
            #expect(ledger.access(originalTransactionID: "1", account: nil) == .allowed)
        }
    }
}
