import AppStoreSimulator
import ArgumentParsing
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Nothing secret in logs (spec app-store-server-api §1, issue 13): the App Store Server API paths — receipts,
/// restore, subscription lookups, Apple refusing the key, Apple unavailable, the catch-up with a refused item
/// — run with the access log on, and no log line holds a JWT or JWS, the key, a receipt or a download token.
@Suite struct ServerAPISecretLogTests {
    @Test func noSecretReachesTheLog() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.accessLog = .on }) { fixture in
            let api = fixture.apple.serverAPI
            var secrets: [String] = []
            let level = api.purchase(PurchaseFixture.level2, customer: "ada")
            let expired = api.purchase(PurchaseFixture.seasonPass, type: .autoRenewable, customer: "ada",
                                       purchaseDate: Date().addingTimeInterval(-40 * 86_400), expiresDate: Date().addingTimeInterval(-86_400))
            api.renew(expired.transactionID, expiresDate: Date().addingTimeInterval(86_400))
            let receipt = try api.appReceipt(for: "ada")
            secrets.append(receipt)
            let bought = try await fixture.postReceipt(receipt, account: "ada-account")
            #expect(bought.status == 200, "\(bought.summary)")
            secrets += bought.entitlements.compactMap { $0["token"] as? String }

            let presented = try #require(try api.signedTransaction(expired.transactionID))
            secrets.append(presented)
            #expect(try await fixture.postTransactions([presented]).status == 200)
            let restored = try await fixture.post("/v1/receipts", body: PurchaseFixture.jsonBytes(
                ["transactions": [try #require(try api.signedTransaction(level.transactionID))], "history": true]))
            #expect(restored.status == 200, "\(restored.summary)")
            secrets += restored.entitlements.compactMap { $0["token"] as? String }

            // Apple unavailable, then Apple refusing the key: a warning and an error with their reasons.
            api.failNext(2, with: .generalInternalRetryable)
            #expect(try await fixture.postTransactions([presented]).status == 200, "a failed lookup falls back to the presented transaction")
            api.refund(level.transactionID)
            api.recordNotification(signedPayload: try TransactionSigner(pki: TestPKI.generate(validFrom: Date().addingTimeInterval(-3600),
                                                                                               validUntil: Date().addingTimeInterval(3600)))
                .signedNotification(.refund, transaction: PurchaseFixture.transaction(), environment: "Production", signedDate: Date()),
                                   at: Date().addingTimeInterval(-1))
            let synced = try #require(await fixture.depot.app.syncNotifications())
            #expect(synced.windows.first?.refused == 1, "the payload signed by an unknown root: \(synced)")
            api.revokeKey(api.key.keyID)
            let receiptAgain = try api.appReceipt(transactionIDs: [expired.transactionID])
            secrets.append(receiptAgain)
            #expect(try await fixture.postReceipt(receiptAgain).status == 502)
            api.failNext(1, with: .generalInternalRetryable)
            _ = await fixture.depot.app.syncNotifications()

            let log = fixture.depot.logs.lines
            #expect(log.contains { ($0.contains(" error ") && $0.contains("App Store Server API")) }, "\(log)")
            #expect(log.contains { ($0.contains(" warning ") && $0.contains("notification sync")) }, "\(log)")
            #expect(log.contains { $0.contains("POST /v1/receipts 200") }, "the access log is on: \(log)")
            let key = api.key.pkcs8PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            for line in log {
                #expect(!line.contains("eyJ"), "a JWT or JWS in the log: \(line)")
                #expect(!line.contains("Bearer"), "\(line)")
                #expect(!line.contains("PRIVATE KEY"), "\(line)")
                for part in key { #expect(!line.contains(part.prefix(24)), "key material in the log: \(line)") }
                for secret in secrets { #expect(!line.contains(secret.prefix(24)), "a receipt, JWS or token in the log: \(line)") }
            }
        }
    }
}
