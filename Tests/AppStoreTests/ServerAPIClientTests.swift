import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import DepotTestSupport
import Foundation
import Testing

/// The Server API client against the simulated App Store: paging, environments, the retry rules of
/// spec §2 (with the calls counted), and every signed item verified.
@Suite struct ServerAPIClientTests {
    static let level2 = "com.example.depot.level2"

    @Test func historyPagesThroughThreePages() async throws {
        try await ServerAPIHarness.run { h in
            let first = h.api.purchase(Self.level2, customer: "ada", purchaseDate: Date().addingTimeInterval(-86_400))
            for index in 1..<45 {
                h.api.purchase("com.example.depot.item\(index)", type: .consumable, customer: "ada",
                               purchaseDate: Date().addingTimeInterval(Double(index - 86_400)))
            }
            h.api.purchase(Self.level2, customer: "someone-else")
            let history = try await h.client.transactionHistory(for: first.transactionID, now: Date()).get()
            #expect(history.transactions.count == 45)
            #expect(history.transactions.first?.transactionId == first.transactionID)
            #expect(Set(history.transactions.map(\.transactionId)).count == 45)
            #expect(history.pages == 3 && history.isComplete)
            #expect(history.environment == .production && history.appAppleId == 1_234_567_890)
            #expect(h.api.calls(.transactionHistory, environment: .production) == 3)
            #expect(h.outcomes.list == Array(repeating: "transaction_history http_200", count: 3))
        }
    }

    @Test func pageLimitStopsAnEndlessHistory() async throws {
        try await ServerAPIHarness.run(configure: { $0.maximumHistoryPages = 2 }) { h in
            h.api.historyPageSize = 1
            let first = h.api.purchase(Self.level2, customer: "ada")
            for _ in 0..<4 { h.api.purchase(Self.level2, type: .consumable, customer: "ada") }
            let history = try await h.client.transactionHistory(for: first.transactionID, now: Date()).get()
            #expect(history.transactions.count == 2 && history.pages == 2 && !history.isComplete)
            #expect(h.api.calls(.transactionHistory) == 2)
        }
    }

    @Test func productionThenSandboxOn4040010() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2, environment: .sandbox)
            let history = try await h.client.transactionHistory(for: purchase.transactionID, now: Date()).get()
            #expect(history.environment == .sandbox && history.transactions.map(\.transactionId) == [purchase.transactionID])
            #expect(history.appAppleId == nil)
            #expect(h.api.calls(.transactionHistory, environment: .production) == 1)
            #expect(h.api.calls(.transactionHistory, environment: .sandbox) == 1)
            #expect(h.outcomes.list == ["transaction_history http_404_4040010", "transaction_history http_200"])
        }
    }

    @Test func sandboxIsNotAskedWhenSandboxIsOff() async throws {
        try await ServerAPIHarness.run(allowSandbox: false) { h in
            let purchase = h.api.purchase(Self.level2, environment: .sandbox)
            let failure = await h.client.transactionHistory(for: purchase.transactionID, now: Date()).failure
            #expect(failure?.kind == "invalid" && failure?.check == nil && failure?.appleErrorCode == 4_040_010)
            #expect(h.api.calls(.transactionHistory, environment: .sandbox) == 0)
            #expect(h.api.calls(.transactionHistory, environment: .production) == 1)
        }
    }

    @Test func unknownInBothEnvironmentsIsInvalid() async throws {
        try await ServerAPIHarness.run { h in
            let failure = await h.client.transactionHistory(for: "2000000999999999", now: Date()).failure
            #expect(failure?.kind == "invalid" && failure?.appleErrorCode == 4_040_010)
            #expect(h.api.calls(.transactionHistory) == 2)
        }
    }

    @Test(arguments: ["", "../../v1/notifications/test", "12 34", String(repeating: "1", count: 200)])
    func identifiersThatAreNotIDsNeverReachApple(id: String) async throws {
        try await ServerAPIHarness.run { h in
            #expect(await h.client.transactionHistory(for: id, now: Date()).failure?.check == .format)
            #expect(h.api.calls() == 0)
        }
    }

    struct RetryCase: Sendable, CustomTestStringConvertible {
        var name: String
        var failure: SimulatedFailure
        var times: Int
        var kind: String?  // nil: success
        var calls: Int
        var retryAfter: Int?
        var testDescription: String { name }
    }

    static let retryCases: [RetryCase] = [
        RetryCase(name: "5000001 once", failure: .generalInternalRetryable, times: 1, kind: nil, calls: 2),
        RetryCase(name: "5000001 twice", failure: .generalInternalRetryable, times: 2, kind: "unavailable", calls: 2, retryAfter: 5),
        RetryCase(name: "4040002 once", failure: .error(httpStatus: 404, errorCode: 4_040_002), times: 1, kind: nil, calls: 2),
        RetryCase(name: "4040004 twice", failure: .error(httpStatus: 404, errorCode: 4_040_004), times: 2, kind: "unavailable", calls: 2),
        RetryCase(name: "4040006 once", failure: .error(httpStatus: 404, errorCode: 4_040_006), times: 1, kind: nil, calls: 2),
        RetryCase(name: "HTTP 503 without Apple's body, twice", failure: .httpStatus(503), times: 2, kind: "unavailable", calls: 2),
        RetryCase(name: "HTTP 500 once", failure: .httpStatus(500), times: 1, kind: nil, calls: 2),
        RetryCase(name: "429 with Retry-After 0 once", failure: .rateLimited(retryAfter: 0), times: 1, kind: nil, calls: 2),
        // A 429's Retry-After of a second or more cannot be honoured within the backoff under a second.
        RetryCase(name: "429 with Retry-After 1 is not retried", failure: .rateLimited(retryAfter: 1), times: 1, kind: "unavailable",
                  calls: 1, retryAfter: 1),
        // Only a 429 is held to its Retry-After: a 5xx is retried whatever it says, and the 503 hands it on.
        RetryCase(name: "503 with Retry-After 7 once", failure: .withRetryAfter(7, .httpStatus(503)), times: 1, kind: nil, calls: 2),
        RetryCase(name: "503 with Retry-After 7, twice", failure: .withRetryAfter(7, .httpStatus(503)), times: 2, kind: "unavailable",
                  calls: 2, retryAfter: 7),
        RetryCase(name: "5000001 with Retry-After 7, twice", failure: .withRetryAfter(7, .generalInternalRetryable), times: 2,
                  kind: "unavailable", calls: 2, retryAfter: 7),
        RetryCase(name: "503 with Retry-After 1 once", failure: .withRetryAfter(1, .httpStatus(503)), times: 1, kind: nil, calls: 2),
        RetryCase(name: "429 with Retry-After 30 is not retried", failure: .rateLimited(retryAfter: 30), times: 1, kind: "unavailable",
                  calls: 1, retryAfter: 30),
        RetryCase(name: "401 is misconfigured", failure: .error(httpStatus: 401, errorCode: 4_010_000), times: 1, kind: "misconfigured", calls: 1),
        RetryCase(name: "403 is misconfigured", failure: .httpStatus(403), times: 1, kind: "misconfigured", calls: 1),
        RetryCase(name: "4000006 is invalid", failure: .error(httpStatus: 400, errorCode: 4_000_006), times: 1, kind: "invalid", calls: 1),
        RetryCase(name: "a 404 without Apple's body is misconfigured", failure: .httpStatus(404), times: 1, kind: "misconfigured", calls: 1),
        RetryCase(name: "a 302 is misconfigured, not retried", failure: .httpStatus(302), times: 1, kind: "misconfigured", calls: 1),
    ]

    @Test(arguments: retryCases)
    func failuresAreMappedAndRetriedAsSpecified(_ example: RetryCase) async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2)
            h.api.failNext(example.times, with: example.failure)
            let result = await h.client.transactionHistory(for: purchase.transactionID, now: Date())
            #expect(result.failure?.kind == example.kind, "\(result)")
            #expect(h.api.calls(.transactionHistory) == example.calls)
            if let retryAfter = example.retryAfter, case .unavailable(let given, _, _)? = result.failure {
                #expect(given == retryAfter)
            }
        }
    }

    /// The pause before the one retry is under a second (the configured 0.3 s backoff) for everything but a
    /// `429`, whose shorter `Retry-After` is waited for and whose `Retry-After` of a second or more is not.
    @Test func theRetryPauseIsUnderASecond() {
        func pause(_ status: Int?, _ retryAfter: Double?) -> Double? {
            ServerAPIStatusPolicy.retryPause(httpStatus: status, retryAfter: retryAfter, backoff: 0.3, longest: 1)
        }
        #expect(pause(503, 1) == 0.3 && pause(503, 7) == 0.3 && pause(500, nil) == 0.3 && pause(404, 7) == 0.3)
        #expect(pause(nil, nil) == 0.3)
        #expect(pause(429, nil) == 0.3 && pause(429, 0) == 0.3 && pause(429, 0.5) == 0.5)
        #expect(pause(429, 1) == nil && pause(429, 30) == nil)
    }

    @Test func timeoutsAreRetriedOnceThenUnavailable() async throws {
        // 2 s an attempt: long enough for each request to reach the store on a saturated machine before its attempt
        // gives up (with 0.3 s, a second attempt sometimes timed out before the store had seen it).
        try await ServerAPIHarness.run(timeout: 2) { h in
            let purchase = h.api.purchase(Self.level2)
            h.api.failNext(2, with: .delay(seconds: 300))
            let started = Date()
            let failure = await h.client.transactionHistory(for: purchase.transactionID, now: Date()).failure
            let elapsed = Date().timeIntervalSince(started)
            #expect(failure?.kind == "unavailable")
            // Both attempts waited their 2 s and neither Apple's 300 s; timers fire late on a saturated machine.
            #expect(elapsed >= 3.9 && elapsed < 150)
            #expect(h.outcomes.list == ["transaction_history timeout", "transaction_history timeout"])
            // Both calls reached the store (the second one's handler may run a moment after its attempt gave up).
            let deadline = ContinuousClock.now + .seconds(30)
            while h.api.calls(.transactionHistory) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(h.api.calls(.transactionHistory) == 2)
        }
    }

    @Test func noConnectionIsUnavailableAfterOneRetry() async throws {
        let refusing = try RefusingPort()
        try await ServerAPIHarness.run(configure: {
            $0.productionURL = URL(string: "http://127.0.0.1:\(refusing.port)")!
        }) { h in
            #expect(await h.client.transactionHistory(for: "2000000000000001", now: Date()).failure?.kind == "unavailable")
            #expect(h.outcomes.list == ["transaction_history no_answer", "transaction_history no_answer"])
        }
        _ = refusing
    }

    /// "At most one retry" (spec §2) counts libcurl's own: a server that closes a kept-alive connection without
    /// answering gets the request twice, not three times (libcurl, under URLSession, resends it once on a fresh
    /// connection by itself, so Depot does not retry it again). A fresh connection closed unanswered is retried
    /// once by Depot. (15 s a call: a saturated machine must not turn a close into a timeout; should it still,
    /// the timeout is retried too, and the count is the same.)
    @Test func aConnectionClosedUnansweredIsSentAtMostTwice() async throws {
        let body = #"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#
        let answer = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        let keptAlive = try HangingUpServer(answered: 1, answer: answer)
        defer { keptAlive.stop() }
        try await ServerAPIHarness.run(timeout: 15, configure: { $0.productionURL = URL(string: "http://127.0.0.1:\(keptAlive.port)")! }) { h in
            // Answered (an Apple error, not retried), the connection stays open for the next call.
            #expect(await h.client.transactionHistory(for: "2000000000000001", now: Date()).failure?.kind == "invalid")
            #expect(await h.client.transactionHistory(for: "2000000000000002", now: Date()).failure?.kind == "unavailable")
            #expect(keptAlive.requests == ["GET /inApps/v2/history/2000000000000001 HTTP/1.1"]
                + Array(repeating: "GET /inApps/v2/history/2000000000000002 HTTP/1.1", count: 2))
        }
        let fresh = try HangingUpServer(answered: 0, answer: answer)
        defer { fresh.stop() }
        try await ServerAPIHarness.run(timeout: 15, configure: { $0.productionURL = URL(string: "http://127.0.0.1:\(fresh.port)")! }) { h in
            #expect(await h.client.transactionHistory(for: "2000000000000003", now: Date()).failure?.kind == "unavailable")
            #expect(fresh.requests == Array(repeating: "GET /inApps/v2/history/2000000000000003 HTTP/1.1", count: 2))
            #expect(h.outcomes.list.count == 2)
            #expect(h.outcomes.list.allSatisfy { $0 == "transaction_history no_answer" || $0 == "transaction_history timeout" }, "\(h.outcomes.list)")
        }
    }

    @Test func revokedKeyIsMisconfiguredWithoutRetry() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2)
            h.api.revokeKey(h.api.key.keyID)
            let failure = await h.client.transactionHistory(for: purchase.transactionID, now: Date()).failure
            guard case .misconfigured(let status, _, let reason)? = failure else {
                Issue.record("\(String(describing: failure))")
                return
            }
            #expect(status == 401 && reason.contains("--apple-api-key"))
            #expect(h.api.calls(.transactionHistory) == 1)
            #expect(h.api.authenticationFailures == ["kid names no key of this issuer"])
        }
    }

    @Test func tamperedSignedTransactionIsRefusedWithItsCheck() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2)
            var parts = JWSParts(try #require(try h.api.signedTransaction(purchase.transactionID)))
            parts.payload = Array(String(decoding: parts.payload, as: UTF8.self)
                .replacingOccurrences(of: Self.level2, with: "com.example.depot.level9").utf8)
            h.api.replaceSignedTransaction(purchase.transactionID, with: parts.compact)
            let failure = await h.client.transactionHistory(for: purchase.transactionID, now: Date()).failure
            #expect(failure?.check == .signature)
            #expect(failure?.reason.contains("signedTransactions[0]") == true)
        }
    }

    @Test func transactionSignedByAnotherPKIFailsTheChain() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2)
            let stranger = TransactionSigner(pki: try TestPKI.generate(validFrom: Date().addingTimeInterval(-86_400),
                                                                        validUntil: Date().addingTimeInterval(86_400)))
            h.api.replaceSignedTransaction(purchase.transactionID, with: try stranger.signedTransaction(.init(
                transactionId: purchase.transactionID, bundleId: ServerAPIHarness.bundle, productId: Self.level2,
                purchaseDate: purchase.purchaseDate, environment: "Production")))
            #expect(await h.client.transactionHistory(for: purchase.transactionID, now: Date()).failure?.check == .chain)
        }
    }

    @Test func answerForAnotherBundleIsMisconfigured() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2)
            h.api.answerBundleID = "com.example.other"
            #expect(await h.client.transactionHistory(for: purchase.transactionID, now: Date()).failure?.kind == "misconfigured")
            #expect(await h.client.subscriptionStatuses(for: purchase.transactionID, now: Date()).failure?.kind == "misconfigured")
        }
    }

    @Test func productionAnswerForAnotherAppAppleIDFailsTheAppIDCheck() async throws {
        try await ServerAPIHarness.run(appAppleID: 999, storeAppAppleID: 1_234_567_890) { h in
            let production = h.api.purchase(Self.level2)
            #expect(await h.client.transactionHistory(for: production.transactionID, now: Date()).failure?.check == .app_id)
            // Sandbox data carries no appAppleId and is not held to it.
            let sandbox = h.api.purchase(Self.level2, environment: .sandbox)
            #expect(await h.client.transactionHistory(for: sandbox.transactionID, startingIn: .sandbox, now: Date()).failure == nil)
            // Production data that carries no appAppleId has nothing to compare (spec §1: only data that carries one).
            h.api.omitsAppAppleID = true
            let history = await h.client.transactionHistory(for: production.transactionID, now: Date())
            #expect(history.failure == nil, "\(history)")
            #expect(await h.client.subscriptionStatuses(for: production.transactionID, now: Date()).failure == nil)
        }
        try await ServerAPIHarness.run(appAppleID: 1_234_567_890) { h in
            let production = h.api.purchase(Self.level2)
            #expect(await h.client.transactionHistory(for: production.transactionID, now: Date()).failure == nil)
        }
    }

    @Test func transactionInfoIsVerified() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2, appAccountToken: "0c8e4f2a-6f6c-4a3e-9a55-5d1b1f0a8f10")
            let transaction = try await h.client.transactionInfo(for: purchase.transactionID, now: Date()).get()
            #expect(transaction.productId == Self.level2 && transaction.appAccountToken == "0c8e4f2a-6f6c-4a3e-9a55-5d1b1f0a8f10")
            #expect(h.outcomes.list == ["transaction_info http_200"])
        }
    }

    @Test func restoreReturnsEveryTransactionOfTheCustomer() async throws {
        try await ServerAPIHarness.run { h in
            let first = h.api.purchase(Self.level2, customer: "ada")
            let second = h.api.purchase("com.example.depot.level3", customer: "ada")
            let season = h.api.purchase("com.example.depot.seasonpass", type: .autoRenewable, customer: "ada",
                                        expiresDate: Date().addingTimeInterval(30 * 86_400))
            h.api.purchase(Self.level2, customer: "bob")
            // The app presents one JWS; the server verified it first.
            let presented = try h.client.verifier.verifyTransaction(try #require(try h.api.signedTransaction(second.transactionID)),
                                                                    now: Date()).get()
            let history = try await h.client.restoreHistory(from: presented, now: Date()).get()
            #expect(Set(history.transactions.map(\.transactionId)) == [first.transactionID, second.transactionID, season.transactionID])
            #expect(h.api.calls(.transactionHistory, environment: .sandbox) == 0)
        }
    }

    @Test func restoreOfASandboxTransactionAsksSandboxOnly() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase(Self.level2, environment: .sandbox)
            let presented = try h.client.verifier.verifyTransaction(try #require(try h.api.signedTransaction(purchase.transactionID)),
                                                                    now: Date()).get()
            #expect(try await h.client.restoreHistory(from: presented, now: Date()).get().transactions.count == 1)
            #expect(h.api.calls(.transactionHistory, environment: .production) == 0)
        }
    }
}
