import AppStore
import AppStoreSimulator
import DepotCore
import Foundation
import HTTP
import Server
import Synchronization
import Testing

/// Apple's latest subscription state (spec §5), notification history (spec §6), test notifications
/// and Send Consumption Information through the simulator.
@Suite struct ServerAPISubscriptionAndNotificationTests {
    static let season = "com.example.depot.seasonpass"

    /// Buys a subscription that expired yesterday and returns the transaction the app presents.
    static func expiredSubscription(_ h: ServerAPIHarness) throws -> (SimulatedTransaction, StoreKitTransaction) {
        let purchase = h.api.purchase(season, type: .autoRenewable, customer: "ada", purchaseDate: Date().addingTimeInterval(-31 * 86_400),
                                      expiresDate: Date().addingTimeInterval(-86_400))
        let presented = try h.client.verifier.verifyTransaction(try #require(try h.api.signedTransaction(purchase.transactionID)),
                                                                now: Date()).get()
        return (purchase, presented)
    }

    @Test func renewedSubscriptionIsFoundThroughTheStatuses() async throws {
        try await ServerAPIHarness.run { h in
            let (purchase, presented) = try Self.expiredSubscription(h)
            let newExpiry = Date().addingTimeInterval(29 * 86_400)
            let renewal = try #require(h.api.renew(purchase.originalTransactionID, purchaseDate: Date().addingTimeInterval(-86_400),
                                                   expiresDate: newExpiry))
            let refresh = await h.client.latestSubscriptionState(of: presented, now: Date())
            #expect(refresh.transaction?.transactionId == renewal.transactionID)
            #expect(refresh.transaction?.originalTransactionId == purchase.originalTransactionID)
            #expect(abs((refresh.transaction?.expiresDate?.timeIntervalSince1970 ?? 0) - newExpiry.timeIntervalSince1970) < 0.01)
            #expect(refresh.isRenewed(at: Date()))
            #expect(h.api.calls(.subscriptionStatuses) == 1)

            let statuses = try await h.client.subscriptionStatuses(for: purchase.originalTransactionID, now: Date()).get()
            #expect(statuses.entries.count == 1 && statuses.entries[0].status == .active)
            #expect(statuses.entries[0].renewalInfo?.autoRenewStatus == 1)
            #expect(statuses.entries[0].subscriptionGroupIdentifier == "group-1")
        }
    }

    @Test func expiredSubscriptionIsReportedExpired() async throws {
        try await ServerAPIHarness.run { h in
            let (purchase, presented) = try Self.expiredSubscription(h)
            let refresh = await h.client.latestSubscriptionState(of: presented, now: Date())
            guard case .latest(let latest) = refresh else {
                Issue.record("\(refresh)")
                return
            }
            #expect(latest.transactionId == purchase.transactionID && !refresh.isRenewed(at: Date()))
            let statuses = try await h.client.subscriptionStatuses(for: purchase.transactionID, now: Date()).get()
            #expect(statuses.entries.map(\.status) == [.expired])
        }
    }

    @Test func refundedRenewalIsNotARenewal() async throws {
        try await ServerAPIHarness.run { h in
            let (purchase, presented) = try Self.expiredSubscription(h)
            let renewal = try #require(h.api.renew(purchase.originalTransactionID, expiresDate: Date().addingTimeInterval(29 * 86_400)))
            h.api.refund(renewal.transactionID)
            let refresh = await h.client.latestSubscriptionState(of: presented, now: Date())
            #expect(refresh.transaction?.revocationDate != nil && !refresh.isRenewed(at: Date()))
        }
    }

    @Test func failedLookupFallsBackToThePresentedTransaction() async throws {
        try await ServerAPIHarness.run { h in
            let (_, presented) = try Self.expiredSubscription(h)
            h.api.failNext(2, with: .generalInternalRetryable)
            let refresh = await h.client.latestSubscriptionState(of: presented, now: Date())
            guard case .presented(let transaction, let failure) = refresh else {
                Issue.record("\(refresh)")
                return
            }
            #expect(transaction == presented && failure?.kind == "unavailable" && !refresh.isRenewed(at: Date()))
            #expect(h.api.calls(.subscriptionStatuses) == 2)
        }
    }

    @Test func tamperedRenewalIsInvalidNotAGrant() async throws {
        try await ServerAPIHarness.run { h in
            let (purchase, presented) = try Self.expiredSubscription(h)
            let renewal = try #require(h.api.renew(purchase.originalTransactionID, expiresDate: Date().addingTimeInterval(29 * 86_400)))
            var parts = JWSParts(try #require(try h.api.signedTransaction(renewal.transactionID)))
            parts.payload = Array(String(decoding: parts.payload, as: UTF8.self).replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":2").utf8)
            h.api.replaceSignedTransaction(renewal.transactionID, with: parts.compact)
            let refresh = await h.client.latestSubscriptionState(of: presented, now: Date())
            guard case .invalid(let failure) = refresh else {
                Issue.record("\(refresh)")
                return
            }
            #expect(failure.check == .signature && !refresh.isRenewed(at: Date()))
        }
    }

    // MARK: - Notification history

    @Test func notificationHistoryPagesAndRefusesATamperedPayload() async throws {
        try await ServerAPIHarness.run { h in
            h.api.notificationPageSize = 2
            let start = Date().addingTimeInterval(-3600)
            let purchase = h.api.purchase("com.example.depot.level2", purchaseDate: Date().addingTimeInterval(-600))  // ONE_TIME_CHARGE
            let refund = try #require(h.api.refund(purchase.transactionID, at: Date().addingTimeInterval(-300)))
            h.api.reverseRefund(purchase.transactionID, at: Date().addingTimeInterval(-200))
            // A payload changed on the way, and one from before the window.
            let genuine = try TransactionSigner(pki: h.api.pki).signedNotification(
                .refund, transaction: nil, bundleId: ServerAPIHarness.bundle, environment: "Production", signedDate: Date().addingTimeInterval(-100))
            var tampered = JWSParts(genuine)
            tampered.payload = Array(String(decoding: tampered.payload, as: UTF8.self).replacingOccurrences(of: "REFUND", with: "REVOKE").utf8)
            h.api.recordNotification(signedPayload: tampered.compact, at: Date().addingTimeInterval(-100))
            h.api.recordNotification(signedPayload: genuine, at: Date().addingTimeInterval(-50))
            h.api.recordNotification(signedPayload: genuine, at: start.addingTimeInterval(-60))
            h.api.purchase("com.example.depot.level3", environment: .sandbox)  // another environment

            let history = try await h.client.notificationHistory(from: start, to: Date(), environment: .production, now: Date()).get()
            #expect(history.items.count == 5 && history.pages == 3 && history.isComplete)
            #expect(history.verified.map(\.notificationType) == [.oneTimeCharge, .refund, .refundReversed, .refund])
            #expect(history.verified[1].notificationUUID == refund)
            #expect(history.verified[1].data?.transactionInfo?.revocationDate != nil)
            #expect(history.verified[1].data?.appAppleId == 1_234_567_890)
            #expect(history.failed.map(\.failure.check) == [.signature])
            #expect(h.api.calls(.notificationHistory) == 3)

            let sandbox = try await h.client.notificationHistory(from: start, to: Date(), environment: .sandbox, now: Date()).get()
            #expect(sandbox.verified.map(\.notificationType) == [.oneTimeCharge] && sandbox.verified[0].data?.environment == .sandbox)
        }
    }

    @Test func notificationPagesArriveOneByOne() async throws {
        try await ServerAPIHarness.run { h in
            h.api.notificationPageSize = 3
            for _ in 0..<7 { h.api.purchase("com.example.depot.level2", type: .consumable, purchaseDate: Date().addingTimeInterval(-60)) }
            let sizes = Lines()
            let result = await h.client.forEachNotificationPage(from: Date().addingTimeInterval(-3600), to: Date(),
                                                                environment: .production, now: Date()) { page in
                sizes.append("\(page.number):\(page.items.count)")
            }
            let summary = try result.get()
            #expect(summary.pages == 3)
            #expect(sizes.list == ["1:3", "2:3", "3:1"])
        }
    }

    @Test func failingPageFailsTheWindow() async throws {
        try await ServerAPIHarness.run { h in
            h.api.notificationPageSize = 1
            for _ in 0..<3 { h.api.purchase("com.example.depot.level2", type: .consumable, purchaseDate: Date().addingTimeInterval(-60)) }
            h.api.failNext(1, with: .rateLimited(retryAfter: 60), endpoint: .notificationHistory)
            let failure = await h.client.notificationHistory(from: Date().addingTimeInterval(-3600), to: Date(),
                                                             environment: .production, now: Date()).failure
            guard case .unavailable(let retryAfter, let code, _)? = failure else {
                Issue.record("\(String(describing: failure))")
                return
            }
            #expect(retryAfter == 60 && code == 4_290_000)
        }
    }

    @Test func sandboxHistoryIsNotReadWhenSandboxIsOff() async throws {
        try await ServerAPIHarness.run(allowSandbox: false) { h in
            #expect(await h.client.notificationHistory(from: Date().addingTimeInterval(-60), to: Date(), environment: .sandbox,
                                                       now: Date()).failure?.check == .environment)
            #expect(h.api.calls() == 0)
        }
    }

    @Test func windowOlderThan180DaysIsRefusedByApple() async throws {
        try await ServerAPIHarness.run { h in
            let failure = await h.client.notificationHistory(from: Date().addingTimeInterval(-200 * 86_400), to: Date(),
                                                             environment: .production, now: Date()).failure
            #expect(failure?.kind == "invalid" && failure?.appleErrorCode == 4_000_015)
        }
    }

    // MARK: - Test notifications and consumption

    @Test func testNotificationIsDeliveredAndReported() async throws {
        let receiver = try NotificationReceiver()
        try await ServerAPIHarness.run { h in
            #expect(await h.client.requestTestNotification(now: Date()).failure?.appleErrorCode == 4_040_007)
            h.api.notificationURL = receiver.url
            let token = try await h.client.requestTestNotification(now: Date()).get()
            await h.api.waitForDeliveries()
            let status = try await h.client.testNotificationStatus(token: token, now: Date()).get()
            #expect(status.notification.notificationType == .test && status.delivered)
            #expect(status.sendAttempts.map(\.result) == [.success])
            #expect(receiver.bodies.count == 1 && receiver.bodies[0].contains("\"signedPayload\""))
            #expect(await h.client.testNotificationStatus(token: "unknown-token", now: Date()).failure?.appleErrorCode == 4_040_008)
        }
        await receiver.stop()
    }

    @Test func undeliveredTestNotificationIsReportedUndelivered() async throws {
        let receiver = try NotificationReceiver(status: 500)
        try await ServerAPIHarness.run { h in
            h.api.notificationURL = receiver.url
            let token = try await h.client.requestTestNotification(now: Date()).get()
            await h.api.waitForDeliveries()
            let status = try await h.client.testNotificationStatus(token: token, now: Date()).get()
            #expect(!status.delivered && status.sendAttempts.map(\.result) == [.unsuccessfulHTTPResponseCode])
        }
        await receiver.stop()
    }

    @Test func consumptionInformationIsSent() async throws {
        try await ServerAPIHarness.run { h in
            let purchase = h.api.purchase("com.example.depot.coins100", type: .consumable)
            let information = ConsumptionInformation(deliveryStatus: .delivered, consumptionPercentage: 100_000, refundPreference: .decline)
            try await h.client.sendConsumptionInformation(information, transactionID: purchase.transactionID, environment: .production,
                                                          now: Date()).get()
            #expect(h.api.consumptionRequests.map(\.bodyText) == [information.json])
            #expect(h.api.consumptionRequests.map(\.transactionID) == [purchase.transactionID])
            #expect(h.outcomes.list == ["consumption http_202"])
            let unknown = await h.client.sendConsumptionInformation(information, transactionID: "2000000000000999",
                                                                    environment: .production, now: Date())
            #expect(unknown.failure?.appleErrorCode == 4_040_010)
        }
    }
}

/// A loopback endpoint that records the notifications POSTed to it.
struct NotificationReceiver {
    private final class Recorder: Responder {
        let received = Mutex<[String]>([])
        let status: Int

        init(status: Int) { self.status = status }

        func handle(_ head: RequestHead, context: RequestContext) -> Handling {
            .collectBody(limit: 1 << 20) { [self] body in
                received.withLock { $0.append(String(decoding: body, as: UTF8.self)) }
                return .response(Response(status: status))
            }
        }

        func errorResponse(status: Int, code: String, message: String) -> Response { Response(status: status) }
    }

    private let recorder: Recorder
    private let server: HTTPServer

    init(status: Int = 200) throws {
        recorder = Recorder(status: status)
        server = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, loopCount: 1), responder: recorder)
    }

    var url: URL { URL(string: "http://\(server.address)/v1/notifications/appstore")! }
    var bodies: [String] { recorder.received.withLock { $0 } }

    func stop() async {
        server.stop()
        await server.stopped()
    }
}
