import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Every failure of the App Store Server API as `/v1/receipts` answers it (spec app-store-server-api §2),
/// with the calls the simulated store received counted.
@Suite struct ServerAPIErrorTests {
    /// A receipt for one registered purchase of `level2`.
    static func receipt(in fixture: PurchaseFixture, environment: SimulatedAppStore.Environment = .production) throws -> String {
        let api = fixture.apple.serverAPI
        let purchase = api.purchase(PurchaseFixture.level2, customer: "c-\(UUID().uuidString.prefix(6))", environment: environment)
        return try #require(try api.transactionReceipt(purchase.transactionID))
    }

    /// A transaction neither environment knows is `422` with Apple's `4040010`; each environment was asked once.
    @Test func anUnknownTransactionIsInvalid() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let response = try await fixture.postReceipt(try ServerAPIReceiptTests.vector("real-receipts/itunes-iap-legacy-transaction-receipt"))
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.errorCode == "receipt_invalid")
            #expect(response.object["check"] == nil)
            #expect(response.object["appleErrorCode"] as? Int == 4_040_010)
            #expect(fixture.apple.serverAPI.calls(.transactionHistory, environment: .production) == 1)
            #expect(fixture.apple.serverAPI.calls(.transactionHistory, environment: .sandbox) == 1)
        }
    }

    /// With sandbox off, a transaction only sandbox knows is `422`, and sandbox is never asked.
    @Test func sandboxIsNotAskedWhenSandboxIsOff() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.allowSandbox = false }) { fixture in
            let response = try await fixture.postReceipt(try Self.receipt(in: fixture, environment: .sandbox))
            #expect(response.status == 422, "\(response.summary)")
            #expect(fixture.apple.serverAPI.calls(.transactionHistory, environment: .sandbox) == 0)
        }
    }

    struct Retryable: Sendable, CustomTestStringConvertible {
        let failure: SimulatedFailure
        let times: Int
        let status: Int
        let calls: Int
        let retryAfter: String?
        var testDescription: String { "\(failure) ×\(times) → \(status) after \(calls) calls" }
    }

    static let retryable: [Retryable] = [
        Retryable(failure: .generalInternalRetryable, times: 1, status: 200, calls: 2, retryAfter: nil),
        Retryable(failure: .generalInternalRetryable, times: 2, status: 503, calls: 2, retryAfter: "5"),
        Retryable(failure: .error(httpStatus: 404, errorCode: 4_040_002), times: 2, status: 503, calls: 2, retryAfter: "5"),
        Retryable(failure: .httpStatus(503), times: 2, status: 503, calls: 2, retryAfter: "5"),
        Retryable(failure: .rateLimited(retryAfter: 30), times: 1, status: 503, calls: 1, retryAfter: "30"),
        Retryable(failure: .rateLimited(retryAfter: 1), times: 1, status: 503, calls: 1, retryAfter: "1"),
        Retryable(failure: .withRetryAfter(7, .httpStatus(503)), times: 2, status: 503, calls: 2, retryAfter: "7"),
        Retryable(failure: .withRetryAfter(7, .generalInternalRetryable), times: 1, status: 200, calls: 2, retryAfter: nil),
    ]

    /// Retryable failures get one retry, then `503 apple_unavailable` with `Retry-After` (Apple's when it gave
    /// one); a `429` asking for a second or more is not retried, a 5xx is whatever its `Retry-After`.
    @Test(arguments: retryable)
    func retryableFailuresAreRetriedOnceThenUnavailable(_ row: Retryable) async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let receipt = try Self.receipt(in: fixture)
            fixture.apple.serverAPI.failNext(row.times, with: row.failure, endpoint: .transactionHistory)
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == row.status, "\(response.summary)")
            #expect(fixture.apple.serverAPI.calls(.transactionHistory) == row.calls)
            if row.status == 503 {
                #expect(response.errorCode == "apple_unavailable")
                #expect(response.header("Retry-After") == row.retryAfter)
            }
        }
    }

    /// A call that outlives `--apple-timeout` twice is `503`.
    @Test func timeoutsAreUnavailable() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.appleTimeout = 0.5 }) { fixture in
            let receipt = try Self.receipt(in: fixture)
            fixture.apple.serverAPI.failNext(2, with: .delay(seconds: 30), endpoint: .transactionHistory)
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 503, "\(response.summary)")
            #expect(response.header("Retry-After") != nil)
            #expect(fixture.apple.serverAPI.calls(.transactionHistory) == 2)
        }
    }

    /// A refused key (`401`) or an answer for another bundle is `502 apple_misconfigured`, not retried, and
    /// logged as an error naming the options to check.
    @Test(arguments: ["revoked key", "other bundle"])
    func refusedConfigurationIsMisconfigured(_ cause: String) async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let receipt = try Self.receipt(in: fixture)
            if cause == "revoked key" { api.revokeKey(api.key.keyID) } else { api.answerBundleID = "com.example.other" }
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 502, "\(response.summary)")
            #expect(response.errorCode == "apple_misconfigured")
            #expect(api.calls(.transactionHistory) == 1)
            let logged = fixture.depot.logs.lines.filter { ($0.contains(" error ") && $0.contains("App Store Server API")) }
            #expect(logged.count == 1, "\(fixture.depot.logs.lines)")
            #expect(logged.first?.contains(cause == "revoked key" ? "--apple-api-key-id" : "--bundle-id") == true)
        }
    }

    /// A signed transaction of Apple's answer that fails a check is never granted: `422` with that check.
    @Test func aTamperedSignedTransactionIsRefused() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let purchase = api.purchase(PurchaseFixture.level2, customer: "eve")
            let genuine = try #require(try api.signedTransaction(purchase.transactionID))
            var parts = genuine.split(separator: ".").map(String.init)
            let payload = try #require(Data(base64URL: parts[1]))
            let forged = String(decoding: payload, as: UTF8.self).replacingOccurrences(of: PurchaseFixture.level2, with: PurchaseFixture.seasonPass)
            parts[1] = Data(forged.utf8).base64URLText
            api.replaceSignedTransaction(purchase.transactionID, with: parts.joined(separator: "."))
            let response = try await fixture.postReceipt(try #require(try api.transactionReceipt(purchase.transactionID)))
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.object["check"] as? String == "signature")
            #expect(response.entitlements.isEmpty)
        }
    }

    /// `--apple-app-id`: a Production answer for another app is `422` with check `app_id`; a Production
    /// notification for another app ID is refused with the same check, one that carries none is not checked;
    /// Sandbox data is exempt.
    @Test func theAppAppleIDIsChecked() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.appleAppID = 42 }) { fixture in
            let production = try await fixture.postReceipt(try Self.receipt(in: fixture))
            #expect(production.status == 422, "\(production.summary)")
            #expect(production.object["check"] as? String == "app_id")
            let sandbox = try await fixture.postReceipt(try Self.receipt(in: fixture, environment: .sandbox))
            #expect(sandbox.status == 200, "\(sandbox.summary)")

            let transaction = PurchaseFixture.transaction()
            let another = try fixture.signer.signedNotification(.refund, transaction: transaction, environment: "Production",
                                                                appAppleId: 43, signedDate: Date())
            let refused = try await fixture.notify(signedPayload: another)
            #expect(refused.status == 401, "\(refused.summary)")
            #expect(refused.object["check"] as? String == "app_id")
            let none = try fixture.signer.signedNotification(.refund, transaction: transaction, environment: "Production", signedDate: Date())
            let accepted = try await fixture.notify(signedPayload: none)
            #expect(accepted.status == 200, "\(accepted.summary)")
            let ours = try fixture.signer.signedNotification(.refund, transaction: PurchaseFixture.transaction(), environment: "Production",
                                                             appAppleId: 42, signedDate: Date())
            #expect(try await fixture.notify(signedPayload: ours).status == 200)
        }
    }
}

extension Data {
    /// Decodes unpadded base64url.
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }

    /// Unpadded base64url.
    var base64URLText: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
