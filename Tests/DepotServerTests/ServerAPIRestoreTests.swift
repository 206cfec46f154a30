import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Restore from one transaction (`"history": true`, spec app-store-server-api §4) and subscriptions judged
/// on Apple's latest state (§5), through `/v1/receipts` against the simulated store.
@Suite struct ServerAPIRestoreTests {
    /// `POST /v1/receipts` with `transactions`, `history` and an account.
    static func post(_ fixture: PurchaseFixture, _ transactions: [String], history: Any?, account: String? = nil) async throws -> RawResponse {
        var object: [String: Any] = ["transactions": transactions]
        object["history"] = history
        object["account"] = account
        return try await fixture.post("/v1/receipts", body: PurchaseFixture.jsonBytes(object))
    }

    /// One transaction the app holds (a consumable) restores every pack the customer owns.
    @Test func oneTransactionRestoresEveryPack() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let level = api.purchase(PurchaseFixture.level2, customer: "ada", purchaseDate: Date().addingTimeInterval(-30 * 86_400))
            let pass = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "ada",
                                    purchaseDate: Date().addingTimeInterval(-20 * 86_400), expiresDate: Date().addingTimeInterval(10 * 86_400))
            let coins = api.purchase(PurchaseFixture.coins, type: .consumable, customer: "ada")
            api.purchase(PurchaseFixture.level2, customer: "someone else")
            let presented = try #require(try api.signedTransaction(coins.transactionID))

            let restored = try await Self.post(fixture, [presented], history: true, account: "ada-phone")
            #expect(restored.status == 200, "\(restored.summary)")
            let granted = Dictionary(uniqueKeysWithValues: restored.entitlements.map { ($0["pack"] as? String ?? "", $0["originalTransactionId"] as? String ?? "") })
            #expect(granted == ["level2": level.transactionID, "level3": pass.transactionID])
            #expect(restored.rejections == [Rejection(product: PurchaseFixture.coins, reason: "no_pack")])
            #expect(api.calls(.transactionHistory, environment: .production) == 1)

            let plain = try await Self.post(fixture, [presented], history: false)
            #expect(plain.status == 200 && plain.entitlements.isEmpty, "without history only the presented transaction counts: \(plain.summary)")
        }
    }

    /// The presented JWS are verified first: a bad one is the same `422` as without `history`, unasked.
    @Test func thePresentedTransactionsAreVerifiedFirst() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let response = try await Self.post(fixture, ["not.a.jws"], history: true)
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.object["check"] as? String == "format")
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }

    /// Apple unavailable during a restore is `503`, as for any call (spec §2).
    @Test func aFailedRestoreIsUnavailable() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let coins = api.purchase(PurchaseFixture.coins, type: .consumable, customer: "cy")
            api.failNext(2, with: .generalInternalRetryable)
            let response = try await Self.post(fixture, [try #require(try api.signedTransaction(coins.transactionID))], history: true)
            #expect(response.status == 503, "\(response.summary)")
            #expect(response.errorCode == "apple_unavailable")
        }
    }

    /// Without a key, `"history": true` is `400 history_unavailable`; `history` must be a boolean and goes
    /// with `transactions`.
    @Test func historyNeedsAKeyAndABoolean() async throws {
        try await PurchaseFixture.run { fixture in
            let jws = try fixture.signer.signedTransaction(PurchaseFixture.transaction())
            let refused = try await Self.post(fixture, [jws], history: true)
            #expect(refused.status == 400, "\(refused.summary)")
            #expect(refused.errorCode == "history_unavailable")
            let without = try await Self.post(fixture, [jws], history: false)
            #expect(without.status == 200 && without.entitlements.count == 1, "\(without.summary)")
        }
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let jws = try fixture.signer.signedTransaction(PurchaseFixture.transaction())
            for value: Any in ["yes", 1, ["true"]] {
                let response = try await Self.post(fixture, [jws], history: value)
                #expect(response.status == 400 && response.errorCode == "bad_request", "\(value): \(response.summary)")
            }
            let withReceipt = try await fixture.post("/v1/receipts", json: "{\"receipt\": \"aGVsbG8=\", \"history\": true}")
            #expect(withReceipt.status == 400 && withReceipt.errorCode == "bad_request", "\(withReceipt.summary)")
        }
    }

    /// An expired subscription that Apple renewed since is granted with the renewal's expiry (Get All
    /// Subscription Statuses); one that Apple did not renew is `expired`.
    @Test func anExpiredSubscriptionIsJudgedOnApplesLatestState() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let month = 30 * 86_400.0
            let renewed = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "dee",
                                       purchaseDate: Date().addingTimeInterval(-month - 3600), expiresDate: Date().addingTimeInterval(-3600))
            let presented = try #require(try api.signedTransaction(renewed.transactionID))
            let newExpiry = PurchaseFixture.wholeSeconds(Date().addingTimeInterval(month))
            let renewal = try #require(api.renew(renewed.transactionID, purchaseDate: Date().addingTimeInterval(-3600), expiresDate: newExpiry))

            let granted = try await fixture.postTransactions([presented])
            #expect(granted.status == 200, "\(granted.summary)")
            #expect(granted.entitlements.first?["transactionId"] as? String == renewal.transactionID)
            #expect(granted.entitlements.first?["expiresDate"] as? String == InternetDateText.format(newExpiry))
            #expect(api.calls(.subscriptionStatuses) == 1)

            let lapsed = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "eli",
                                      purchaseDate: Date().addingTimeInterval(-month - 3600), expiresDate: Date().addingTimeInterval(-3600))
            let rejected = try await fixture.postTransactions([try #require(try api.signedTransaction(lapsed.transactionID))])
            #expect(rejected.status == 200, "\(rejected.summary)")
            #expect(rejected.entitlements.isEmpty)
            #expect(rejected.rejections == [Rejection(product: PurchaseFixture.seasonPass, reason: "expired")])
            #expect(api.calls(.subscriptionStatuses) == 2)
        }
    }

    /// A failed lookup falls back to the presented transaction (expired), never to a grant; a running
    /// subscription is not looked up at all.
    @Test func aFailedLookupNeverGrants() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let expired = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "fay",
                                       purchaseDate: Date().addingTimeInterval(-40 * 86_400), expiresDate: Date().addingTimeInterval(-86_400))
            let presented = try #require(try api.signedTransaction(expired.transactionID))
            api.renew(expired.transactionID, expiresDate: Date().addingTimeInterval(30 * 86_400))
            api.failNext(2, with: .generalInternalRetryable, endpoint: .subscriptionStatuses)
            let response = try await fixture.postTransactions([presented])
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.isEmpty)
            #expect(response.rejections == [Rejection(product: PurchaseFixture.seasonPass, reason: "expired")])

            let running = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "gus",
                                       expiresDate: Date().addingTimeInterval(86_400))
            let calls = api.calls(.subscriptionStatuses)
            let active = try await fixture.postTransactions([try #require(try api.signedTransaction(running.transactionID))])
            #expect(active.entitlements.count == 1, "\(active.summary)")
            #expect(api.calls(.subscriptionStatuses) == calls)
        }
    }

    /// Without a key an expired subscription is `expired`, and nothing is asked.
    @Test func withoutAKeyAnExpiredSubscriptionIsExpired() async throws {
        try await PurchaseFixture.run { fixture in
            let transaction = PurchaseFixture.transaction(PurchaseFixture.seasonPass, expires: Date().addingTimeInterval(-60))
            let response = try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)])
            #expect(response.rejections == [Rejection(product: PurchaseFixture.seasonPass, reason: "expired")], "\(response.summary)")
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }
}
