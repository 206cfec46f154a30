import DepotClient
import DepotTestSupport
import Foundation
import Ledger
import Synchronization
import Testing
import DepotServer

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
            // The production schedule: 1 s, 2 s, 4 s, … between attempts.
            let dispatcher = Self.dispatcher(ledger, receiver, schedule: .webhooks)
            dispatcher.start()
            let downSince = ContinuousClock.now
            for purchase in ["a", "b"] {
                for type in [WebhookEventType.purchaseGranted, .packDelivered] {
                    await dispatcher.emit(type, orderingKey: purchase, data: WebhookEventData(originalTransactionId: purchase))
                }
            }
            // While the receiver is down, the first event of each purchase is tried again and again (refused).
            #expect(await Self.poll(timeout: .seconds(60)) {
                for purchase in ["a", "b"] {
                    guard let first = try await ledger.outboxItems(queue: .webhook, orderingKey: purchase).first, first.attempts >= 3 else {
                        return false
                    }
                }
                return true
            })
            let remaining = Duration.seconds(30) - (ContinuousClock.now - downSince)
            if remaining > .zero { try await Task.sleep(for: remaining) }
            #expect(try await ledger.pendingOutboxCount(queue: .webhook) == 4)
            #expect(dispatcher.worker.statistics.outcomes["failed", default: 0] >= 6)
            try receiver.up()
            #expect(await receiver.wait { Set($0.compactMap(\.event?.id)).count == 4 })
            for purchase in ["a", "b"] {
                #expect(Self.types(receiver.deliveries, purchase: purchase) == ["purchase.granted", "pack.delivered"])
            }
            await dispatcher.stop()
            await receiver.down()
        }
    }

    /// Polls `condition` every 50 ms (without blocking the cooperative pool) until it holds or `timeout` passed.
    static func poll(timeout: Duration = .seconds(90), _ condition: () async throws -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return (try? await condition()) == true
    }

    /// A receiver that takes 5 s to accept an event: stopping waits for that attempt and records it sent, so
    /// the next start does not send it again.
    @Test func stopWaitsForTheAttemptInFlightAndRecordsItsOutcome() async throws {
        try await Self.withLedger { ledger, _ in
            let receiver = try WebhookReceiver()
            receiver.hold(.seconds(5))
            let dispatcher = WebhookDispatcher(url: receiver.url, secret: Self.secret, ledger: ledger, owner: UUID().uuidString,
                                               timeout: 30, schedule: Self.fast, poll: .milliseconds(100),
                                               logger: Logger(output: LogOutput(capturing: true)))
            dispatcher.start()
            await dispatcher.emit(.purchaseGranted, orderingKey: "p1", data: WebhookEventData(originalTransactionId: "p1"))
            #expect(await receiver.wait { $0.count == 1 })
            await dispatcher.stop()
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").map(\.state) == [.sent])
            #expect(receiver.deliveries.count == 1)
            await receiver.down()
        }
    }

    /// Stopping waits for an attempt in flight at most the lease (after it another instance may take the item over).
    @Test func stopWaitsAtMostTheLease() async throws {
        try await Self.withLedger { ledger, _ in
            let released = Atomic<Bool>(false)
            let worker = OutboxWorker(queue: .webhook, ledger: ledger, owner: UUID().uuidString, schedule: Self.fast, lease: 1,
                                      poll: .milliseconds(100), logger: Logger(output: LogOutput(capturing: true))) { _ in
                // Held until the test lets it go (at most 5 minutes).
                let until = ContinuousClock.now + .seconds(300)
                while !released.load(ordering: .acquiring), ContinuousClock.now < until { try? await Task.sleep(for: .milliseconds(50)) }
                return .sent
            }
            let created = Date()
            try await ledger.enqueue([OutboxEntry(queue: .webhook, key: "held", orderingKey: "p1", payload: "{}", created: created,
                                                  deadline: created.addingTimeInterval(3600))])
            worker.start()
            #expect(await Self.poll(timeout: .seconds(120)) { worker.attemptsInFlight == 1 })
            // The lease (1 s) runs out during the attempt: the worker does not attempt the item a second time.
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(worker.attemptsInFlight == 1)
            let started = ContinuousClock.now
            await worker.stop()
            let waited = ContinuousClock.now - started
            // The attempt is still held: stop returned after the lease (1 s), not after the attempt.
            #expect(waited >= .milliseconds(900) && worker.attemptsInFlight == 1, "\(waited)")
            released.store(true, ordering: .releasing)
            // The attempt still ends and is recorded before the ledger closes.
            #expect(await Self.poll(timeout: .seconds(120)) { worker.attemptsInFlight == 0 })
        }
    }

    /// An item whose schedule would pass its deadline gets one last attempt shortly before it (it was set at the
    /// deadline itself, where the attempt is refused as too late). On a clock the test moves.
    @Test func theLastRetryRunsBeforeTheDeadline() async throws {
        try await Self.withLedger { ledger, _ in
            let start = Date()
            let offset = Mutex<Double>(0)
            let attempts = Mutex(0)
            let worker = OutboxWorker(queue: .webhook, ledger: ledger, owner: UUID().uuidString,
                                      schedule: RetrySchedule(base: 100_000, maximum: 100_000), lease: 30, poll: .milliseconds(100),
                                      logger: Logger(output: LogOutput(capturing: true)),
                                      now: { start.addingTimeInterval(offset.withLock { $0 }) }) { _ in
                attempts.withLock { $0 += 1 }
                return .failed("refused")
            }
            // 12 hours to live: the last attempt 30 s before the deadline.
            let deadline = start.addingTimeInterval(12 * 3600)
            try await ledger.enqueue([OutboxEntry(queue: .webhook, key: "evt_last", orderingKey: "p1", payload: "{}", created: start,
                                                  deadline: deadline)])
            worker.start()
            #expect(await Self.poll(timeout: .seconds(120)) {
                try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").first?.attempts == 1
            })
            let next = try #require(try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").first?.nextAttempt)
            #expect(abs(next.timeIntervalSince(deadline) + OutboxWorker.finalAttemptLead) < 1, "\(next) vs \(deadline)")
            // 29 s before the deadline: the last attempt is due, and runs.
            offset.withLock { $0 = 12 * 3600 - 29 }
            #expect(await Self.poll(timeout: .seconds(120)) {
                try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").first?.state == .abandoned
            })
            let item = try #require(try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").first)
            #expect(item.attempts == 2 && attempts.withLock { $0 } == 2, "\(item)")
            await worker.stop()
        }
    }

    /// A receiver's `Retry-After` is a floor for the next attempt, whatever the schedule says.
    @Test func retryAfterDelaysTheNextAttempt() async throws {
        try await Self.withLedger { ledger, _ in
            let times = Mutex<[ContinuousClock.Instant]>([])
            let worker = OutboxWorker(queue: .consumption, ledger: ledger, owner: UUID().uuidString, schedule: Self.fast, lease: 30,
                                      poll: .milliseconds(100), logger: Logger(output: LogOutput(capturing: true))) { _ in
                let count = times.withLock { times -> Int in
                    times.append(.now)
                    return times.count
                }
                return count == 1 ? .failed("busy", retryAfter: 3) : .sent
            }
            let created = Date()
            try await ledger.enqueue([OutboxEntry(queue: .consumption, key: "c1", orderingKey: "p1", payload: "{}", created: created,
                                                  deadline: created.addingTimeInterval(3600))])
            worker.start()
            #expect(await Self.poll(timeout: .seconds(60)) {
                try await ledger.outboxItems(queue: .consumption, orderingKey: "p1").first?.state == .sent
            })
            let seen = times.withLock { $0 }
            #expect(seen.count == 2)
            if seen.count == 2 { #expect(seen[1] - seen[0] >= .milliseconds(2_900), "\(seen[1] - seen[0])") }
            await worker.stop()
        }
    }

    /// One slow receiver's purchase does not hold the others: each item is its own attempt, and a finished one
    /// makes room for the next at once.
    @Test func aSlowPurchaseDoesNotHoldTheOthers() async throws {
        try await Self.withLedger { ledger, _ in
            let released = Atomic<Bool>(false)
            let worker = OutboxWorker(queue: .webhook, ledger: ledger, owner: UUID().uuidString, schedule: Self.fast, lease: 600,
                                      batch: 4, poll: .milliseconds(100), logger: Logger(output: LogOutput(capturing: true))) { item in
                // The slow one is held until the test lets it go (at most 5 minutes).
                let until = ContinuousClock.now + .seconds(300)
                while item.entry.orderingKey == "slow", !released.load(ordering: .acquiring), ContinuousClock.now < until {
                    try? await Task.sleep(for: .milliseconds(50))
                }
                return .sent
            }
            let created = Date()
            var entries = [OutboxEntry(queue: .webhook, key: "slow-1", orderingKey: "slow", payload: "{}", created: created,
                                       deadline: created.addingTimeInterval(3600))]
            for index in 0..<20 {
                entries.append(OutboxEntry(queue: .webhook, key: "fast-\(index)", orderingKey: "fast-\(index)", payload: "{}",
                                           created: created, deadline: created.addingTimeInterval(3600)))
            }
            try await ledger.enqueue(entries)
            worker.start()
            // Twenty events of other purchases, four places, one of them held by the slow one: all go out while it
            // is held (waiting for the whole batch, they would wait for it).
            #expect(await Self.poll(timeout: .seconds(120)) { try await ledger.pendingOutboxCount(queue: .webhook) == 1 })
            #expect(worker.attemptsInFlight == 1)
            released.store(true, ordering: .releasing)
            #expect(await Self.poll(timeout: .seconds(120)) { try await ledger.pendingOutboxCount(queue: .webhook) == 0 })
            await worker.stop()
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
            // The abandoned one never went out (the new one may arrive twice: at least once, on a loaded machine).
            #expect(receiver.deliveries.allSatisfy { $0.event?.type == "purchase.granted" })
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
