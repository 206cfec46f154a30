import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// `POST /v1/receipts {"receipt": ...}` through the App Store Server API (spec app-store-server-api §2, §3),
/// against the simulated store: a transaction ID read from the receipt, the customer's history, every
/// signed transaction verified and judged as StoreKit 2.
@Suite struct ServerAPIReceiptTests {
    /// A real receipt from the shared vectors (base64 text).
    static func vector(_ path: String) throws -> String {
        let file = TestDepot.repositoryRoot + "/Tests/AppStoreTests/Fixtures/" + path
        return try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The real receipts and the transaction ID each gives (one of those the vectors list for it), and the
    /// environment its purchases live in.
    static let realReceipts: [(file: String, transactionID: String, environment: SimulatedAppStore.Environment)] = [
        ("real-receipts/receipt-production", "340001196262039", .production),
        ("real-receipts/receipt-sandbox-g5", "2000001092134138", .sandbox),
        ("real-receipts/receipt-sandbox-legacy", "1000000603177571", .sandbox),
        ("real-receipts/xcode-app-receipt-legacy", "2000000909538865", .sandbox),
        ("real-receipts/itunes-iap-legacy-transaction-receipt", "1000000056161764", .sandbox),
    ]

    /// Each real receipt opens the history of the transaction it names: production first, sandbox on
    /// 4040010; the answer's environment is the one that answered, and the purchase grants its pack.
    @Test(arguments: realReceipts.indices)
    func realReceiptsGoThroughTheHistory(_ index: Int) async throws {
        let (file, id, environment) = Self.realReceipts[index]
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            api.purchase(PurchaseFixture.level2, customer: "vector-\(index)", environment: environment, transactionID: id)
            let response = try await fixture.postReceipt(try Self.vector(file))
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.object["environment"] as? String == environment.rawValue)
            #expect(response.entitlements.map { $0["transactionId"] as? String } == [id])
            #expect(response.entitlements.first?["pack"] as? String == "level2")
            #expect(try await fixture.packStatus("level2", token: try #require(response.token)).status == 307)
            #expect(api.calls(.transactionHistory, environment: .production) == 1)
            #expect(api.calls(.transactionHistory, environment: .sandbox) == (environment == .sandbox ? 1 : 0))
            #expect(fixture.apple.callCounts == (0, 0), "verifyReceipt is not asked")
        }
    }

    /// Apple's library vector of an app receipt without purchases: `200` with nothing, and Apple is not asked.
    @Test func aReceiptWithoutPurchasesIsEmptyWithoutAskingApple() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let response = try await fixture.postReceipt(try Self.vector("apple-library/xcode/xcode-app-receipt-empty"))
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.isEmpty && response.rejected.isEmpty)
            let minted = try await fixture.postReceipt(try fixture.apple.serverAPI.appReceipt(transactionIDs: []))
            #expect(minted.status == 200 && minted.entitlements.isEmpty, "\(minted.summary)")
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }

    /// Base64 that is neither an app receipt nor a transaction receipt is `422` with check `format`, unasked.
    @Test(arguments: ["aGVsbG8gd29ybGQ=", "MIIBAAAA", Data([0x30, 0x03, 0x02, 0x01, 0x01]).base64EncodedString()])
    func notAReceiptIsAFormatFailure(_ receipt: String) async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.errorCode == "receipt_invalid")
            #expect(response.object["check"] as? String == "format")
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }

    /// A minted receipt holding one of the customer's purchases unlocks every pack of the customer (the
    /// history holds them all), over three history pages; a subscription that runs grants with its expiry.
    @Test func aReceiptUnlocksTheWholeHistoryOverSeveralPages() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            api.historyPageSize = 2
            let start = Date().addingTimeInterval(-86_400 * 10)
            let level = api.purchase(PurchaseFixture.level2, customer: "ada", purchaseDate: start)
            for day in 1...3 { api.purchase(PurchaseFixture.coins, type: .consumable, customer: "ada", purchaseDate: start.addingTimeInterval(Double(day) * 3600)) }
            let expires = PurchaseFixture.wholeSeconds(Date().addingTimeInterval(20 * 86_400))
            let pass = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "ada", purchaseDate: start.addingTimeInterval(86_400),
                                    expiresDate: expires)
            let response = try await fixture.postReceipt(try api.appReceipt(transactionIDs: [level.transactionID]), account: "ada-account")
            #expect(response.status == 200, "\(response.summary)")
            let packs = Set(response.entitlements.compactMap { $0["pack"] as? String })
            #expect(packs == ["level2", "level3"])
            let season = response.entitlements.first { $0["pack"] as? String == "level3" }
            #expect(season?["originalTransactionId"] as? String == pass.transactionID)
            #expect(season?["expiresDate"] as? String == InternetDateText.format(expires))
            #expect(response.rejections.filter { $0.reason == "no_pack" }.count == 3, "the coins: one original transaction each")
            #expect(api.calls(.transactionHistory) == 3, "five transactions, two per page")
        }
    }

    /// The one-minute cache and the sharing of identical receipts in flight apply as for `verifyReceipt`.
    @Test func identicalReceiptsAreAnsweredOnce() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let purchase = api.purchase(PurchaseFixture.level2, customer: "bea")
            let receipt = try api.appReceipt(transactionIDs: [purchase.transactionID])
            api.failNext(1, with: .delay(seconds: 0.5), endpoint: .transactionHistory)
            async let first = fixture.postReceipt(receipt)
            async let second = fixture.postReceipt(receipt)
            let (a, b) = try await (first, second)
            #expect(a.status == 200 && b.status == 200, "\(a.summary) / \(b.summary)")
            let third = try await fixture.postReceipt(receipt)
            #expect(third.status == 200 && third.token != nil)
            #expect(api.calls(.transactionHistory) == 1)
        }
    }

    /// With a key, `--receipt-validation verify-receipt` keeps receipts on `verifyReceipt`.
    @Test func verifyReceiptModeKeepsVerifyReceipt() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.receiptValidation = .verifyReceipt }) { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 200 && response.entitlements.count == 1, "\(response.summary)")
            #expect(fixture.apple.callCounts.production == 1)
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }

    /// Without a key (`auto`), receipts still go to `verifyReceipt` and Apple's API is never asked.
    @Test func withoutAKeyReceiptsGoToVerifyReceipt() async throws {
        try await PurchaseFixture.run { fixture in
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([PurchaseFixture.purchase()]))
            #expect(response.status == 200 && response.entitlements.count == 1, "\(response.summary)")
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }
}

/// RFC 3339 as the purchase answer writes dates (whole seconds, UTC).
enum InternetDateText {
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
