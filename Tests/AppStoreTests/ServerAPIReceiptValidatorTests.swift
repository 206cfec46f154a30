import AppStore
import AppStoreSimulator
import DepotCore
import Foundation
import Testing

/// Receipts without `verifyReceipt` (spec §3): receipt → transaction ID → every page of history →
/// every transaction verified, with the minute-long cache and shared in-flight lookups.
@Suite struct ServerAPIReceiptValidatorTests {
    @Test func appReceiptYieldsTheCustomersHistory() async throws {
        try await ServerAPIHarness.run { h in
            for index in 0..<25 { h.api.purchase("com.example.depot.item\(index)", customer: "ada") }
            let validator = ServerAPIReceiptValidator(client: h.client)
            let receipt = try h.api.appReceipt(for: "ada")
            guard case .history(let history) = try await validator.validate(receipt: receipt, now: Date()).get() else {
                Issue.record("no history")
                return
            }
            #expect(history.transactions.count == 25 && history.pages == 2 && history.environment == .production)
            #expect(h.api.calls(.transactionHistory) == 2)
        }
    }

    @Test func transactionReceiptWorksToo() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase("com.example.depot.level2", environment: .sandbox)
            let receipt = try #require(try h.api.transactionReceipt(purchase.transactionID))
            let result = try await ServerAPIReceiptValidator(client: h.client).validate(receipt: receipt, now: Date()).get()
            guard case .history(let history) = result else {
                Issue.record("\(result)")
                return
            }
            #expect(history.environment == .sandbox && history.transactions.map(\.transactionId) == [purchase.transactionID])
        }
    }

    @Test func receiptWithoutPurchasesAsksNobody() async throws {
        try await ServerAPIHarness.run { h in
            let validator = ServerAPIReceiptValidator(client: h.client)
            let minted = await validator.validate(receipt: try h.api.appReceipt(transactionIDs: []), now: Date())
            #expect(minted == .success(.noPurchase))
            let xcode = await validator.validate(receipt: try Fixtures.text("apple-library/xcode/xcode-app-receipt-empty"), now: Date())
            #expect(xcode == .success(.noPurchase))
            #expect(h.api.calls() == 0)
        }
    }

    @Test func somethingElseIsAFormatFailure() async throws {
        try await ServerAPIHarness.run { h in
            let failure = await ServerAPIReceiptValidator(client: h.client).validate(receipt: "bm90IGEgcmVjZWlwdA==", now: Date()).failure
            #expect(failure?.kind == "invalid" && failure?.check == .format)
            #expect(h.api.calls() == 0)
        }
    }

    @Test func answersAreCachedForAMinute() async throws {
        try await ServerAPIHarness.run { h in
            h.api.purchase("com.example.depot.level2", customer: "ada")
            let validator = ServerAPIReceiptValidator(client: h.client)
            let receipt = try h.api.appReceipt(for: "ada")
            let start = Date()
            let first = await validator.validate(receipt: receipt, now: start)
            #expect(await validator.validate(receipt: receipt, now: start.addingTimeInterval(50)) == first)
            #expect(h.api.calls(.transactionHistory) == 1)
            _ = await validator.validate(receipt: receipt, now: start.addingTimeInterval(61))
            #expect(h.api.calls(.transactionHistory) == 2)
            // A new purchase makes a new receipt: it is not answered from the old one's entry.
            h.api.purchase("com.example.depot.level3", customer: "ada")
            let newer = try h.api.appReceipt(for: "ada")
            guard case .history(let history) = try await validator.validate(receipt: newer, now: start.addingTimeInterval(62)).get() else {
                Issue.record("no history")
                return
            }
            #expect(history.transactions.count == 2)
        }
    }

    @Test func transientFailuresAreNotCached() async throws {
        try await ServerAPIHarness.run { h in
            h.api.purchase("com.example.depot.level2", customer: "ada")
            let validator = ServerAPIReceiptValidator(client: h.client)
            let receipt = try h.api.appReceipt(for: "ada")
            h.api.failNext(2, with: .httpStatus(503))
            #expect(await validator.validate(receipt: receipt, now: Date()).failure?.kind == "unavailable")
            #expect((try? await validator.validate(receipt: receipt, now: Date()).get()) != nil)
            #expect(h.api.calls(.transactionHistory) == 3)
        }
    }

    @Test func identicalReceiptsInFlightShareOneLookup() async throws {
        try await ServerAPIHarness.run { h in
            h.api.purchase("com.example.depot.level2", customer: "ada")
            h.api.failNext(1, with: .delay(seconds: 0.4))
            let validator = ServerAPIReceiptValidator(client: h.client)
            let receipt = try h.api.appReceipt(for: "ada")
            let results = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { (try? await validator.validate(receipt: receipt, now: Date()).get()) != nil } }
                var all: [Bool] = []
                for await ok in group { all.append(ok) }
                return all
            }
            #expect(results.count == 10 && results.allSatisfy { $0 })
            #expect(h.api.calls(.transactionHistory) == 1)
        }
    }
}
