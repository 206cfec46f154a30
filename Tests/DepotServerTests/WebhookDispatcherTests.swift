import DepotClient
import DepotTestSupport
import Foundation
import Ledger
import Testing
@testable import DepotServer

/// The webhook queue and sender against a loopback receiver, on a real ledger.
@Suite struct WebhookDispatcherTests {
    static let secret = "webhook-secret-0123456789abcdef-0123456789"
    static let fast = RetrySchedule(base: 0.05, maximum: 0.5)

    static func withLedger(_ body: (Ledger, String) async throws -> Void) async throws {
        let directory = TemporaryDirectory("webhooks")
        let path = directory.path + "/var/ledger.sqlite"
        let ledger = try await Ledger.open(at: path)
        do {
            try await body(ledger, path)
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        withExtendedLifetime(directory) {}
    }

    static func dispatcher(_ ledger: Ledger, _ receiver: WebhookReceiver, schedule: RetrySchedule = fast,
                           logs: LogOutput = LogOutput(capturing: true)) -> WebhookDispatcher {
        WebhookDispatcher(url: receiver.url, secret: secret, ledger: ledger, owner: UUID().uuidString, timeout: 2,
                          schedule: schedule, poll: .milliseconds(100), logger: Logger(output: logs))
    }

    /// The types of a purchase's events in the order they first arrived (delivery is at least once: a POST
    /// that timed out on a loaded machine may arrive again).
    static func types(_ deliveries: [WebhookReceiver.Delivery], purchase: String) -> [String] {
        var seen: Set<String> = []
        return deliveries.compactMap(\.event).filter { $0.data.originalTransactionId == purchase && seen.insert($0.id).inserted }.map(\.type)
    }

    @Test func everyEventArrivesSignedAndInOrderPerPurchase() async throws {
        try await Self.withLedger { ledger, _ in
            let receiver = try WebhookReceiver()
            let dispatcher = Self.dispatcher(ledger, receiver)
            dispatcher.start()
            var emitted: [WebhookEvent] = []
            for purchase in ["p1", "p2", "p3"] {
                for type in [WebhookEventType.purchaseGranted, .packDelivered, .purchaseRevoked, .purchaseRestored] {
                    let event = try #require(await dispatcher.emit(type, orderingKey: purchase,
                                                                   data: WebhookEventData(originalTransactionId: purchase, pack: "level2")))
                    emitted.append(event)
                }
            }
            #expect(await receiver.wait { Set($0.compactMap(\.event?.id)).count == emitted.count })
            let deliveries = receiver.deliveries
            for delivery in deliveries {
                #expect(WebhookSignature.verify(body: delivery.body, header: delivery.signature, secret: Self.secret))
                #expect(!WebhookSignature.verify(body: delivery.body, header: delivery.signature, secret: Self.secret + "!"))
            }
            for purchase in ["p1", "p2", "p3"] {
                #expect(Self.types(deliveries, purchase: purchase)
                        == ["purchase.granted", "pack.delivered", "purchase.revoked", "purchase.restored"])
            }
            let first = try #require(deliveries.first?.event)
            #expect(first.id.hasPrefix("evt_") && first.id.count == 36)
            #expect(first.created.hasSuffix("Z"))
            // The body is the one-line JSON the ledger holds, exactly as signed.
            #expect(String(decoding: deliveries[0].body, as: UTF8.self).hasPrefix(#"{"id": "evt_"#))
            // The last answers reach the dispatcher (and the counters) just after the receiver recorded them.
            #expect(try await eventually(within: 30) {
                let metrics = dispatcher.metricsText()
                return metrics.contains("depot_webhook_deliveries_total{outcome=\"sent\"} 12") && metrics.contains("depot_webhook_queue_length 0")
            }, "\(dispatcher.metricsText())")
            await dispatcher.stop()
            await receiver.down()
        }
    }

    @Test func failuresAreRetriedWithoutOvertakingWithinAPurchase() async throws {
        try await Self.withLedger { ledger, _ in
            let receiver = try WebhookReceiver()
            receiver.answer(500)
            let dispatcher = Self.dispatcher(ledger, receiver)
            dispatcher.start()
            for type in [WebhookEventType.purchaseGranted, .purchaseRevoked, .purchaseRestored] {
                await dispatcher.emit(type, orderingKey: "p1", data: WebhookEventData(originalTransactionId: "p1"))
            }
            // Only the first event is tried while it fails.
            #expect(await receiver.wait { $0.count >= 4 })
            #expect(Set(receiver.deliveries.compactMap(\.event?.type)) == ["purchase.granted"])
            // The length is read after each attempt: the one that reaches the receiver may not have updated it yet.
            #expect(try await eventually(within: 30) { dispatcher.metricsText().contains("depot_webhook_queue_length 3") })
            receiver.answer(204)
            #expect(await receiver.wait { Self.types($0, purchase: "p1").suffix(2) == ["purchase.revoked", "purchase.restored"] })
            let types = Self.types(receiver.deliveries, purchase: "p1")
            #expect(types.filter { $0 != "purchase.granted" } == ["purchase.revoked", "purchase.restored"])
            // The receiver has the last POST before the dispatcher has its answer and marks the event sent.
            #expect(try await eventually(within: 30) { try await ledger.pendingOutboxCount(queue: .webhook) == 0 })
            #expect(!dispatcher.metricsText().contains("{outcome=\"failed\"} 0"))
            await dispatcher.stop()
            await receiver.down()
        }
    }

    @Test func aReceiverDownForThirtySecondsGetsEverythingWhenItReturns() async throws {
        try await Self.withLedger { ledger, _ in
            let receiver = try WebhookReceiver()
            await receiver.down()
            let dispatcher = Self.dispatcher(ledger, receiver, schedule: RetrySchedule(base: 0.5, maximum: 2))
            dispatcher.start()
            for purchase in ["a", "b"] {
                for type in [WebhookEventType.purchaseGranted, .packDelivered] {
                    await dispatcher.emit(type, orderingKey: purchase, data: WebhookEventData(originalTransactionId: purchase))
                }
            }
            try await Task.sleep(for: .seconds(30))
            #expect(receiver.deliveries.isEmpty)
            #expect(try await ledger.pendingOutboxCount(queue: .webhook) == 4)
            try receiver.up()
            #expect(await receiver.wait { Set($0.compactMap(\.event?.id)).count == 4 })
            for purchase in ["a", "b"] {
                #expect(Self.types(receiver.deliveries, purchase: purchase) == ["purchase.granted", "pack.delivered"])
            }
            await dispatcher.stop()
            await receiver.down()
        }
    }

    @Test func queuedEventsSurviveARestartOfTheLedger() async throws {
        let directory = TemporaryDirectory("webhooks-restart")
        let path = directory.path + "/var/ledger.sqlite"
        let receiver = try WebhookReceiver()
        await receiver.down()
        let first = try await Ledger.open(at: path)
        let stopped = Self.dispatcher(first, receiver)
        // Never started: the events wait in the ledger.
        await stopped.emit(.packPublished, orderingKey: "pack:level2", data: WebhookEventData(pack: "level2", version: 2))
        await stopped.emit(.purchaseGranted, orderingKey: "p1", data: WebhookEventData(originalTransactionId: "p1"))
        await first.close()

        try receiver.up()
        let second = try await Ledger.open(at: path)
        let dispatcher = Self.dispatcher(second, receiver)
        dispatcher.start()
        #expect(await receiver.wait { Set($0.compactMap(\.event?.type)) == ["pack.published", "purchase.granted"] })
        await dispatcher.stop()
        await second.close()
        await receiver.down()
        withExtendedLifetime(directory) {}
    }

    @Test func anEventPastItsDeadlineIsAbandoned() async throws {
        try await Self.withLedger { ledger, _ in
            let receiver = try WebhookReceiver()
            receiver.answer(503)
            let logs = LogOutput(capturing: true)
            let dispatcher = Self.dispatcher(ledger, receiver, logs: logs)
            // An entry queued 24 h ago by a server that was down since.
            let old = Date().addingTimeInterval(-WebhookDispatcher.lifetime - 1)
            try await ledger.enqueue([OutboxEntry(queue: .webhook, key: "evt_old", orderingKey: "p9", payload: "{}", created: old,
                                                  deadline: old.addingTimeInterval(WebhookDispatcher.lifetime))])
            await dispatcher.emit(.purchaseGranted, orderingKey: "p9", data: WebhookEventData(originalTransactionId: "p9"))
            receiver.answer(200)
            dispatcher.start()
            #expect(await receiver.wait { $0.contains { $0.event?.type == "purchase.granted" } })
            #expect(receiver.deliveries.count == 1)
            // The receiver has the POST before the dispatcher has its answer and marks the event sent.
            #expect(try await eventually(within: 30) {
                try await ledger.outboxItems(queue: .webhook, orderingKey: "p9").map(\.state) == [.abandoned, .sent]
            })
            #expect(logs.lines.contains { $0.contains("gave up on evt_old") })
            await dispatcher.stop()
            await receiver.down()
        }
    }
}
