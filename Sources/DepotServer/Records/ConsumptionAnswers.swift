import AppStore
package import DepotCore
import DepotWire
import Foundation
package import Ledger

/// Answers to Apple's refund requests (spec app-store-server-api §7), with `--consumption-info on`.
///
/// A verified `CONSUMPTION_REQUEST` is queued in the ledger before it is acknowledged (`NotificationReceiver`);
/// an `OutboxWorker` on the consumption queue then answers each with Send Consumption Information through the
/// server's `ServerAPIClient`, computed from the purchase's delivery record (``answer(for:deliveries:snapshot:)``)
/// when it is sent. Failures are retried with backoff until 12 hours after the notification's `signedDate`;
/// the queue survives restarts; Apple's refusal of the transaction (`invalid`) ends it. The answer Apple
/// accepted is kept with the item (`Ledger.consumptionAnswers`) and raises `consumption.sent`, queued in the
/// transaction that marks it sent (so a crash cannot keep one without the other).
package final class ConsumptionAnswers: Sendable {
    /// Seconds after queueing before the first attempt: every instance writes its delivery record at least
    /// once a second, so what was sent just before the request is in the record by then.
    package static let settle: Double = 3

    let worker: OutboxWorker

    /// Answers through `client`; `schedule` and `poll` are the retry delays and how often the queue is looked
    /// at without a new request (tests shorten them).
    init(client: ServerAPIClient, ledger: Ledger, store: CatalogStore, webhooks: WebhookDispatcher?, owner: String,
         appleTimeout: Double, schedule: RetrySchedule = .consumption, poll: Duration = .seconds(1), settle: Double = settle,
         logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        worker = OutboxWorker(
            queue: .consumption, ledger: ledger, owner: owner, schedule: schedule, lease: settle + appleTimeout * 2 + 10,
            batch: 8, poll: poll, logger: logger, now: now,
            attempt: { item in
                guard let request = ConsumptionRequest(payload: item.entry.payload) else { return .refused("unreadable request") }
                let wait = item.entry.created.addingTimeInterval(settle).timeIntervalSince(now())
                if wait > 0 { try? await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
                let deliveries: [LedgerDelivery]
                do {
                    deliveries = try await ledger.deliveries(originalTransactionID: request.originalTransactionId)
                } catch {
                    return .failed("ledger: \(error)")
                }
                let information = Self.answer(for: request, deliveries: deliveries, snapshot: store.current)
                switch await client.sendConsumptionInformation(information, transactionID: request.transactionId,
                                                               environment: AppStoreEnvironment(rawValue: request.environment),
                                                               now: now()) {
                case .success:
                    let pack = store.current?.catalog.products.first { $0.id == request.productId }?.pack
                    return .sentRecording(information.json, announcing: webhooks.flatMap { Self.sentEvent(request, information, pack: pack, webhooks: $0) }
                        .map { [$0] } ?? [])
                case .failure(.invalid(_, _, let reason)): return .refused(reason)
                // Apple's `Retry-After` (or the client's default when it sent none) is a floor for the next attempt.
                case .failure(let failure):
                    if case .unavailable(let retryAfter, _, _) = failure { return .failed(failure.description, retryAfter: Double(retryAfter)) }
                    return .failed(failure.description)
                }
            },
            finished: { item, outcome in
                guard let request = ConsumptionRequest(payload: item.entry.payload),
                      case .sentRecording = outcome, let answer = LedgerConsumptionAnswer(item)?.sent else { return }
                logger.info(.consumption, "CONSUMPTION_REQUEST for \(request.transactionId) answered: \(answer.deliveryStatus), "
                    + "\(answer.consumptionPercentage.map(String.init) ?? "no") milliunits, refund preference \(answer.refundPreference ?? "none")")
                webhooks?.worker.wake()
            })
    }

    /// The `consumption.sent` entry for the answer `information` to `request` (once per request).
    static func sentEvent(_ request: ConsumptionRequest, _ information: ConsumptionInformation, pack: String?,
                          webhooks: WebhookDispatcher) -> OutboxEntry? {
        webhooks.entry(.consumptionSent, orderingKey: request.originalTransactionId, data: WebhookEventData(
            originalTransactionId: request.originalTransactionId, transactionId: request.transactionId,
            productId: request.productId, pack: pack, deliveryStatus: information.deliveryStatus.rawValue,
            consumptionPercentage: information.consumptionPercentage, refundPreference: information.refundPreference?.rawValue),
            once: request.key)?.1
    }

    /// Starts answering (the queue left by an earlier run first).
    func start() { worker.start() }

    /// Stops answering (what is left stays queued).
    func stop() async { await worker.stop() }

    /// A request was just queued: look at the queue now.
    package func wake() { worker.wake() }

    /// The answer to `request` from the purchase's delivery record: the product's pack in the catalog, the
    /// version of it that decides (``ConsumptionRules/decisive(_:)``: the most complete the purchase received
    /// something of, or the live version when it received nothing), its chunks and bytes as the record kept
    /// them (so a version pruned since is still judged), or from its manifest for a record written without them.
    /// A product without a pack (or one no longer in the catalog) is answered without a percentage.
    package static func answer(for request: ConsumptionRequest, deliveries: [LedgerDelivery], snapshot: DepotSnapshot?) -> ConsumptionInformation {
        guard let snapshot, let pack = snapshot.catalog.products.first(where: { $0.id == request.productId })?.pack,
              let entry = snapshot.content.packs[pack] else {
            return ConsumptionRules.answer(for: nil)
        }
        let received = Dictionary(grouping: deliveries.filter { $0.pack == pack }, by: \.version)
        var numbers = Set(received.keys)
        if let current = entry.current { numbers.insert(current) }
        var versions: [Int: ConsumptionRules.Delivery] = [:]
        for number in numbers {
            let sent = received[number] ?? []
            guard let totals = sent.lazy.compactMap(\.versionTotals).first
                    ?? entry.versions[number].map({ DeliveryRecorder.totals(of: $0.manifest) }) else { continue }
            versions[number] = ConsumptionRules.Delivery(
                deliveredChunks: sent.reduce(0) { $0 + $1.chunks.count }, totalChunks: totals.chunks,
                deliveredBytes: sent.reduce(0) { $0 + $1.deliveredBytes }, totalBytes: totals.bytes)
        }
        return ConsumptionRules.answer(for: ConsumptionRules.decisive(versions))
    }

    /// `/metrics` lines: answers by outcome and the queue length.
    func metricsText() -> String {
        worker.statistics.metricsText(
            total: "depot_consumption_answers_total", totalHelp: "Attempts to answer CONSUMPTION_REQUEST notifications, by outcome (sent, failed, abandoned).",
            queue: "depot_consumption_queue_length", queueHelp: "Consumption answers waiting to be sent.")
    }
}
