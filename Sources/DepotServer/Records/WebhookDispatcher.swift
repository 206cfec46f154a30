import DepotCrypto
package import DepotWire
package import Foundation
package import Ledger

/// Webhooks to the studio's backend (spec app-store-server-api §8): `emit` queues an event durably in the
/// ledger's outbox (ordered by purchase); an `OutboxWorker` POSTs each one as JSON with `Depot-Signature:
/// t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (signed at each attempt, so the timestamp is fresh),
/// one at a time per purchase, retrying anything but a `2xx` with exponential backoff for 24 hours.
/// Nothing here blocks the request that caused an event: it waits only for the ledger write that queues it.
package final class WebhookDispatcher: Sendable {
    /// How long an event is retried.
    package static let lifetime: Double = 24 * 3600

    let url: URL
    private let secret: String
    private let ledger: Ledger
    private let logger: Logger
    private let now: @Sendable () -> Date
    /// The worker that sends the queued events.
    package let worker: OutboxWorker

    /// A dispatcher to `url` signing with `secret`; `schedule` and `poll` are the retry delays and how often
    /// the queue is looked at without a new event (tests shorten them).
    package init(url: URL, secret: String, ledger: Ledger, owner: String, timeout: Double = 10, schedule: RetrySchedule = .webhooks,
         poll: Duration = .seconds(1), logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.url = url
        self.secret = secret
        self.ledger = ledger
        self.logger = logger
        self.now = now
        let post = OutboundPost(timeout: timeout)
        worker = OutboxWorker(
            queue: .webhook, ledger: ledger, owner: owner, schedule: schedule, lease: timeout * 2 + 5, poll: poll, logger: logger,
            now: now,
            attempt: { item in
                let body = Data(item.entry.payload.utf8)
                let timestamp = Int(now().timeIntervalSince1970)
                let outcome = await post.post(body, to: url, headers: [
                    ("Content-Type", "application/json; charset=utf-8"),
                    ("Depot-Signature", Self.signature(body: Array(body), secret: secret, timestamp: timestamp)),
                    ("User-Agent", "depot"),
                ])
                switch outcome {
                case .status(let status) where (200...299).contains(status): return .sent
                case .status(let status) where (300...399).contains(status): return .failed("HTTP \(status) (redirects are not followed)")
                case .status(let status): return .failed("HTTP \(status)")
                case .noAnswer(let reason): return .failed(reason)
                }
            })
    }

    /// Starts delivering.
    package func start() { worker.start() }

    /// Stops delivering (events stay queued for the next start).
    package func stop() async { await worker.stop() }

    /// Queues one event about `orderingKey` (a purchase's original transaction, or `pack:<id>`), durably,
    /// and wakes the worker. A ledger that cannot take it is logged; the change that caused it stands.
    /// `once`, when given, names the change itself: an event with the same `once` is queued only the first
    /// time (by any instance), and its `id` derives from it.
    @discardableResult
    package func emit(_ type: WebhookEventType, orderingKey: String, data: WebhookEventData, once: String? = nil) async -> WebhookEvent? {
        guard let (event, entry) = entry(type, orderingKey: orderingKey, data: data, once: once) else { return nil }
        do {
            try await ledger.enqueue([entry])
        } catch {
            logger.error(.webhook, "webhook \(type.rawValue) for \(orderingKey) could not be queued: \(error)")
            return nil
        }
        worker.wake()
        return event
    }

    /// The event and the outbox entry that queues it (see `emit`), without queueing it.
    func entry(_ type: WebhookEventType, orderingKey: String, data: WebhookEventData, once: String?) -> (WebhookEvent, OutboxEntry)? {
        let created = now()
        let id = once.map { "evt_" + Hex.encode(SHA256.hash(Array("\(type.rawValue):\($0)".utf8)).prefix(16)) }
            ?? "evt_" + Hex.encode(SecureRandom.bytes(16))
        let event = WebhookEvent(id: id, type: type.rawValue,
                                 created: Timestamp.rfc3339(Int64(created.timeIntervalSince1970)), data: data)
        guard let body = try? WireJSON.encode(event) else { return nil }
        // The body as sent: one line, without the encoder's final newline.
        let payload = String(decoding: body.dropLast(), as: UTF8.self)
        return (event, OutboxEntry(queue: .webhook, key: event.id, orderingKey: orderingKey, payload: payload, created: created,
                                   deadline: created.addingTimeInterval(Self.lifetime)))
    }

    /// The outbox entry announcing an access change the ledger is writing (`purchase.granted` once per purchase
    /// and account, `purchase.revoked` once per revocation, `purchase.restored` once per cause), and a nudge
    /// to the worker (the entry is there once that write commits; the worker also looks every `poll`).
    func accessEntry(_ change: AccessChange, pack: String?) -> OutboxEntry? {
        let type: WebhookEventType
        let once: String
        switch change.kind {
        case .granted:
            type = .purchaseGranted
            once = "\(change.originalTransactionID):\(change.account ?? "-")"
        case .revoked:
            type = .purchaseRevoked
            once = "\(change.transactionID):\(Int64(exactly: (change.at.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0)"
        case .restored:
            type = .purchaseRestored
            once = "\(change.transactionID):\(change.cause)"
        }
        // A support decision concerns the purchase as a whole: its revocation names no App Store transaction
        // (the row's own key stays inside the ledger), and its reason is `support` both ways.
        let support = change.by == RevocationAuthority.admin.rawValue
        let data = WebhookEventData(
            originalTransactionId: change.originalTransactionID,
            transactionId: RevocationRecord.isSupportKey(change.transactionID) ? nil : change.transactionID, productId: change.productID,
            pack: pack, account: change.account, by: change.kind == .granted ? nil : change.by,
            reason: support && change.kind != .granted ? RevocationRecord.supportReason : change.reason)
        defer { worker.wake() }
        return entry(type, orderingKey: change.originalTransactionID, data: data, once: once)?.1
    }

    /// The outbox entry announcing that a purchase received every chunk of a version (`pack.delivered`, once per
    /// purchase and version), queued by the delivery-record write that completed it, and a nudge to the worker.
    func deliveredEntry(_ completion: DeliveryCompletion, productID: String?) -> OutboxEntry? {
        defer { worker.wake() }
        return entry(.packDelivered, orderingKey: completion.originalTransactionID, data: WebhookEventData(
            originalTransactionId: completion.originalTransactionID, productId: productID, pack: completion.pack,
            version: completion.version, chunks: completion.chunks, bytes: completion.bytes),
            once: "\(completion.originalTransactionID):\(completion.pack):\(completion.version)")?.1
    }

    /// The `Depot-Signature` value of `body` at `timestamp`.
    static func signature(body: [UInt8], secret: String, timestamp: Int) -> String {
        "t=\(timestamp),v1=" + Hex.encode(HMACSHA256.authenticate(Array("\(timestamp).".utf8) + body, key: Array(secret.utf8)))
    }

    /// `/metrics` lines: deliveries by outcome and the queue length.
    package func metricsText() -> String {
        worker.statistics.metricsText(
            total: "depot_webhook_deliveries_total", totalHelp: "Webhook delivery attempts, by outcome (sent, failed, abandoned).",
            queue: "depot_webhook_queue_length", queueHelp: "Webhook events waiting to be delivered.")
    }
}
