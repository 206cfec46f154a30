import Ledger
import DepotServer
import DepotTestSupport
import Foundation
import Testing
import AppStoreSimulator

/// A purchase presented by a second app account, under each `--account-policy` (spec §3, §4.2, §4.3),
/// and restoring on a new device.
@Suite struct PurchaseAccountPolicyTests {
    struct Policy: Sendable, CustomTestStringConvertible {
        var policy: AccountPolicy
        /// Whether the second account is granted the pack.
        var secondGranted: Bool
        /// Whether the first account's token still opens the pack afterwards.
        var firstTokenWorks: Bool
        var testDescription: String { policy.rawValue }
    }

    static let policies: [Policy] = [
        Policy(policy: .transfer, secondGranted: true, firstTokenWorks: false),
        Policy(policy: .first, secondGranted: false, firstTokenWorks: true),
        Policy(policy: .shared, secondGranted: true, firstTokenWorks: true),
    ]

    @Test(arguments: policies)
    func secondAccount(_ policy: Policy) async throws {
        try await PurchaseFixture.run(configure: { $0.accountPolicy = policy.policy }) { fixture in
            let purchase = PurchaseFixture.purchase()
            let receipt = fixture.apple.issueReceipt([purchase])

            let first = try await fixture.postReceipt(receipt, account: "account-a")
            #expect(first.status == 200, "\(first.summary)")
            let tokenA = try #require(first.token)
            #expect(try await fixture.packStatus("level2", token: tokenA).status == 307)

            let second = try await fixture.postReceipt(receipt, account: "account-b")
            #expect(second.status == 200, "\(second.summary)")
            if policy.secondGranted {
                #expect(second.rejected.isEmpty)
                let tokenB = try #require(second.token)
                #expect(try await fixture.packStatus("level2", token: tokenB).status == 307)
            } else {
                #expect(second.entitlements.isEmpty)
                #expect(second.rejections == [Rejection(product: PurchaseFixture.level2, reason: "bound_to_other_account")])
                #expect(second.rejected.first?["transactionId"] as? String == purchase.transactionID)
            }

            let afterwards = try await fixture.packStatus("level2", token: tokenA)
            if policy.firstTokenWorks {
                #expect(afterwards.status == 307, "\(afterwards.summary)")
            } else {
                #expect(afterwards.status == 403, "\(afterwards.summary)")
            }

            // The first account presenting it again: under `first` and `shared` it keeps it; under
            // `transfer` it takes it back as the newest presenter.
            let again = try await fixture.postReceipt(receipt, account: "account-a")
            #expect(again.status == 200)
            #expect(again.entitlements.count == 1, "\(again.summary)")
            let freshA = try #require(again.token)
            #expect(try await fixture.packStatus("level2", token: freshA).status == 307)
        }
    }

    /// Under `transfer`, the account that lost the purchase gets it back by presenting it again, and the
    /// other account's token stops working.
    @Test func transferGoesToTheNewestPresenter() async throws {
        try await PurchaseFixture.run(configure: { $0.accountPolicy = .transfer }) { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            let a = try #require(try await fixture.postReceipt(receipt, account: "account-a").token)
            let b = try #require(try await fixture.postReceipt(receipt, account: "account-b").token)
            #expect(try await fixture.packStatus("level2", token: a).status == 403)
            #expect(try await fixture.packStatus("level2", token: b).status == 307)
            let a2 = try #require(try await fixture.postReceipt(receipt, account: "account-a").token)
            #expect(try await fixture.packStatus("level2", token: a2).status == 307)
            #expect(try await fixture.packStatus("level2", token: b).status == 403)
        }
    }

    /// Restore on a new device: the same request again gives the same entitlements with fresh tokens.
    @Test(arguments: [nil, "account-a"] as [String?])
    func restoreGivesTheSameEntitlementsWithFreshTokens(account: String?) async throws {
        try await PurchaseFixture.run { fixture in
            let subscription = PurchaseFixture.purchase(PurchaseFixture.seasonPass, expires: Date().addingTimeInterval(86_400))
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase(), subscription])
            let first = try await fixture.postReceipt(receipt, account: account)
            #expect(first.status == 200)
            #expect(first.entitlements.count == 2)

            // Token expiries have whole-second resolution: let the clock tick once.
            try await Self.untilNextSecond()
            let restored = try await fixture.postReceipt(receipt, account: account)
            #expect(restored.status == 200)
            let fixed = ["productId", "pack", "transactionId", "originalTransactionId", "purchaseDate", "expiresDate", "manifest"]
            func stable(_ response: RawResponse) -> [[String]] {
                response.entitlements.map { entry in fixed.map { "\(entry[$0] ?? "absent")" } }
            }
            #expect(stable(restored) == stable(first))
            #expect(restored.rejected.isEmpty)
            for (old, new) in zip(first.entitlements, restored.entitlements) {
                let oldExpiry = try #require(old["tokenExpires"] as? String)
                let newExpiry = try #require(new["tokenExpires"] as? String)
                #expect(newExpiry > oldExpiry)
                #expect(new["token"] as? String != old["token"] as? String)
                // Both tokens open the pack.
                let pack = try #require(new["pack"] as? String)
                #expect(try await fixture.packStatus(pack, token: try #require(old["token"] as? String)).status == 307)
                #expect(try await fixture.packStatus(pack, token: try #require(new["token"] as? String)).status == 307)
            }
        }
    }

    /// Waits for the wall clock to enter the next whole second (at most one second).
    static func untilNextSecond() async throws {
        let now = Date().timeIntervalSince1970
        let next = now.rounded(.down) + 1
        try await Task.sleep(for: .milliseconds(Int((next - now) * 1000) + 20))
    }
}
