import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// How Apple's `verifyReceipt` answers become Depot's answers (spec §4.2 error table): one retry for
/// transient outcomes, sandbox on 21007, a timeout, and no answer at all.
@Suite struct ReceiptAppleStatusTests {
    /// One scripted Apple behaviour and what the app must see.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var behaviour: SimulatedAppStore.Behaviour
        var status: Int
        var code: String?
        var appleStatus: Int?
        /// Calls Apple receives for the receipt: 2 when the one retry is made.
        var calls: Int

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "21005 twice → 503", behaviour: .init(statuses: [21005, 21005]),
             status: 503, code: "apple_unavailable", appleStatus: 21005, calls: 2),
        Case(name: "21009 twice → 503", behaviour: .init(statuses: [21009, 21009]),
             status: 503, code: "apple_unavailable", appleStatus: 21009, calls: 2),
        Case(name: "21100 is-retryable true twice → 503", behaviour: .init(statuses: [21100, 21100], isRetryable: true),
             status: 503, code: "apple_unavailable", appleStatus: 21100, calls: 2),
        Case(name: "21199 without is-retryable → 503", behaviour: .init(alwaysStatus: 21199),
             status: 503, code: "apple_unavailable", appleStatus: 21199, calls: 2),
        Case(name: "HTTP 500 → 503", behaviour: .init(httpStatus: 500),
             status: 503, code: "apple_unavailable", appleStatus: nil, calls: 2),
        Case(name: "HTTP 503 → 503", behaviour: .init(httpStatus: 503),
             status: 503, code: "apple_unavailable", appleStatus: nil, calls: 2),
        Case(name: "21005 then 0 → 200", behaviour: .init(statuses: [21005]),
             status: 200, code: nil, appleStatus: nil, calls: 2),
        Case(name: "21100 is-retryable false → 422", behaviour: .init(statuses: [21100], isRetryable: false),
             status: 422, code: "receipt_invalid", appleStatus: 21100, calls: 1),
        Case(name: "21002 twice → 422", behaviour: .init(statuses: [21002, 21002]),
             status: 422, code: "receipt_invalid", appleStatus: 21002, calls: 2),
        Case(name: "21002 then 0 → 200", behaviour: .init(statuses: [21002]),
             status: 200, code: nil, appleStatus: nil, calls: 2),
        Case(name: "21003 → 422", behaviour: .init(alwaysStatus: 21003),
             status: 422, code: "receipt_invalid", appleStatus: 21003, calls: 1),
        Case(name: "21010 → 422", behaviour: .init(alwaysStatus: 21010),
             status: 422, code: "receipt_invalid", appleStatus: 21010, calls: 1),
        Case(name: "unknown 21999 → 422", behaviour: .init(alwaysStatus: 21999),
             status: 422, code: "receipt_invalid", appleStatus: 21999, calls: 1),
        Case(name: "21004 → 502", behaviour: .init(alwaysStatus: 21004),
             status: 502, code: "apple_misconfigured", appleStatus: 21004, calls: 1),
        Case(name: "21000 → 502", behaviour: .init(alwaysStatus: 21000),
             status: 502, code: "apple_misconfigured", appleStatus: 21000, calls: 1),
        Case(name: "HTTP 404 → 502", behaviour: .init(httpStatus: 404),
             status: 502, code: "apple_misconfigured", appleStatus: nil, calls: 1),
    ]

    @Test(arguments: cases)
    func appleAnswer(_ example: Case) async throws {
        try await PurchaseFixture.run { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], behaviour: example.behaviour)
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == example.status, "\(response.summary)")
            #expect(fixture.apple.calls(forReceipt: receipt) == example.calls)
            if example.status == 200 {
                #expect(response.entitlements.count == 1)
                return
            }
            #expect(response.errorCode == example.code)
            #expect(response.object["appleStatus"] as? Int == example.appleStatus)
            // RFC 9110 §10.2.3: a 503 says when to come back; the app keeps its transaction unfinished.
            #expect((response.header("Retry-After").flatMap { Int($0) } != nil) == (example.status == 503))
        }
    }

    @Test func sandboxReceiptIsRetriedInSandbox() async throws {
        try await PurchaseFixture.run { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], environment: .sandbox)
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.object["environment"] as? String == "Sandbox")
            #expect(response.entitlements.count == 1)
            #expect(fixture.apple.callCounts == (production: 1, sandbox: 1))
            // Sent unchanged to the sandbox.
            #expect(fixture.apple.lastRequestFields["receipt-data"] == receipt)
        }
    }

    @Test func sandboxReceiptIsRefusedWhenSandboxIsOff() async throws {
        try await PurchaseFixture.run(configure: { $0.allowSandbox = false }) { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], environment: .sandbox)
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.errorCode == "receipt_invalid")
            #expect(response.object["appleStatus"] as? Int == 21007)
            #expect(fixture.apple.callCounts == (production: 1, sandbox: 0))
        }
    }

    /// Production says "sandbox receipt" (21007), the sandbox says "production receipt" (21008): the
    /// endpoints disagree, so the configuration is wrong; no ping-pong.
    @Test func sandboxAnswering21008AfterProduction21007IsMisconfigured() async throws {
        try await PurchaseFixture.run { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], behaviour: .init(statuses: [21007]))
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 502, "\(response.summary)")
            #expect(response.errorCode == "apple_misconfigured")
            #expect(response.object["appleStatus"] as? Int == 21008)
            #expect(fixture.apple.callCounts == (production: 1, sandbox: 1))
        }
    }

    /// `--apple-verify-url` pointing at the sandbox: a production receipt comes back 21008.
    @Test func productionURLPointingAtTheSandboxIsMisconfigured() async throws {
        try await PurchaseFixture.run(configure: { $0.appleVerifyURL = $0.appleSandboxVerifyURL }) { fixture in
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([PurchaseFixture.purchase()]))
            #expect(response.status == 502, "\(response.summary)")
            #expect(response.errorCode == "apple_misconfigured")
            #expect(fixture.apple.callCounts == (production: 0, sandbox: 1))
        }
    }

    @Test func unreachableAppleIsUnavailable() async throws {
        let refusing = try RefusingPort()
        let url = refusing.url
        try await PurchaseFixture.run(configure: { $0.appleVerifyURL = url; $0.appleSandboxVerifyURL = url }) { fixture in
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([PurchaseFixture.purchase()]))
            #expect(response.status == 503, "\(response.summary)")
            #expect(response.errorCode == "apple_unavailable")
            #expect(response.header("Retry-After") != nil)
            // Nothing reached a live store.
            #expect(fixture.apple.callCounts == (production: 0, sandbox: 0))
        }
        withExtendedLifetime(refusing) {}
    }

    /// Apple slower than `--apple-timeout`: a `503` after two bounded attempts, long before Apple answers.
    @Test func appleSlowerThanTheTimeoutIsUnavailable() async throws {
        try await PurchaseFixture.run(configure: { $0.appleTimeout = 0.5 }) { fixture in
            let slowness = 300.0
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], behaviour: .init(delay: slowness))
            let started = Date()
            let response = try await fixture.postReceipt(receipt)
            let elapsed = Date().timeIntervalSince(started)
            #expect(response.status == 503, "\(response.summary)")
            #expect(response.errorCode == "apple_unavailable")
            #expect(response.header("Retry-After") != nil)
            // Two attempts of 0.5 s each (not cut short) and a backoff under 1 s; Apple itself would have
            // taken 300 s (the wide margin absorbs a saturated machine, where timers fire late and 15 s has been
            // seen; the store releases its held answer when stopped, so the long delay costs nothing).
            #expect(elapsed >= 0.95)
            #expect(elapsed < 150)
            #expect(fixture.apple.calls(forReceipt: receipt) == 2)
        }
    }

    /// A sub-second `--apple-timeout` still lets Apple answer within it (URLSession on Linux would truncate
    /// 0.9 s to 0 and fail every call). Up to six receipts: a saturated machine may fire a timer late now and then.
    @Test func appleAnsweringWithinASubSecondTimeoutIsValid() async throws {
        try await PurchaseFixture.run(configure: { $0.appleTimeout = 0.9 }) { fixture in
            var statuses: [Int] = []
            for _ in 0..<6 where !statuses.contains(200) {
                let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], behaviour: .init(delay: 0.3))
                statuses.append(try await fixture.postReceipt(receipt).status)
            }
            #expect(statuses.last == 200, "\(statuses)")
        }
    }
}
