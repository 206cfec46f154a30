import AppStore
import DepotTestSupport
import DepotWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Ledger
import Testing
import DepotServer

/// Calls out of the server (webhooks, and Apple through the same `BoundedHTTPSession`) follow no redirect and
/// keep a bounded part of an answer's body.
@Suite struct OutboundPostTests {
    static func session(limit: Int) -> BoundedHTTPSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.timeoutIntervalForResource = 30
        return BoundedHTTPSession(configuration: configuration, maximumBodyBytes: limit)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectIsTheAnswerNotFollowed(status: Int) async throws {
        let elsewhere = try WebhookReceiver()
        let redirecting = try WebhookReceiver()
        redirecting.answer(status, location: elsewhere.url.absoluteString)
        let outcome = await OutboundPost(timeout: 20).post(Data("{}".utf8), to: redirecting.url, headers: [])
        #expect(outcome == .status(status))
        // A PUT to Apple (Send Consumption Information) goes through the same kind of session.
        var put = URLRequest(url: redirecting.url)
        put.httpMethod = "PUT"
        put.httpBody = Data("{}".utf8)
        guard case .answered(let answered, let fields, _, false) = await Self.session(limit: 1024).send(put) else {
            Issue.record("no answer")
            return
        }
        #expect(answered == status)
        #expect(fields.contains { $0.key.lowercased() == "location" && $0.value == elsewhere.url.absoluteString })
        #expect(redirecting.deliveries.count == 2)
        #expect(elsewhere.deliveries.isEmpty)
        await elsewhere.down()
        await redirecting.down()
    }

    @Test func theBodyOfAnAnswerIsCappedNotBuffered() async throws {
        let receiver = try WebhookReceiver()
        let big = [UInt8](repeating: 0x61, count: 4 << 20)
        receiver.answer(200, body: big)
        guard case .answered(200, _, let body, let truncated) = await Self.session(limit: 65_536).send(URLRequest(url: receiver.url)) else {
            Issue.record("no answer")
            return
        }
        #expect(body.count == 65_536 && truncated)
        guard case .answered(200, _, let small, false) = await Self.session(limit: 8 << 20).send(URLRequest(url: receiver.url)) else {
            Issue.record("no answer")
            return
        }
        #expect(small.count == big.count)
        #expect(await OutboundPost(timeout: 20).post(Data("{}".utf8), to: receiver.url, headers: []) == .status(200))
        await receiver.down()
    }

    /// A webhook answered with a redirect is not delivered: it stays queued and is tried again, and the
    /// redirect's target never hears of it.
    @Test func aWebhookAnsweredWithARedirectIsRetried() async throws {
        try await WebhookDispatcherTests.withLedger { ledger, _ in
            let elsewhere = try WebhookReceiver()
            let redirecting = try WebhookReceiver()
            redirecting.answer(307, location: elsewhere.url.absoluteString)
            let dispatcher = WebhookDispatcherTests.dispatcher(ledger, redirecting)
            dispatcher.start()
            await dispatcher.emit(.purchaseGranted, orderingKey: "p1", data: WebhookEventData(originalTransactionId: "p1"))
            #expect(await redirecting.wait { $0.count >= 3 })
            let items = try await ledger.outboxItems(queue: .webhook, orderingKey: "p1")
            #expect(items.map(\.state) == [.pending])
            #expect(items.first?.lastError?.contains("307") == true, "\(items)")
            #expect(elsewhere.deliveries.isEmpty)
            await dispatcher.stop()
            await elsewhere.down()
            await redirecting.down()
        }
    }
}
