import AppStore
import Server
import ArgumentParsing
import DepotCore
import DepotWire
import Foundation
import Ledger
import Synchronization

/// Purchases as data (spec app-store-server-api §7, §8), composed for one server: the delivery record's
/// gatherer, the webhook dispatcher, the consumption answers (with `--consumption-info on` and a Server API
/// client), and the events they raise (`pack.delivered` when a purchase has every chunk of a version,
/// `pack.published` when a version goes live, `consumption.sent` when Apple accepted an answer).
final class PurchaseRecords: Sendable {
    let deliveries: DeliveryRecorder?
    let webhooks: WebhookDispatcher?
    let consumption: ConsumptionAnswers?
    private let ledger: Ledger
    private let store: CatalogStore
    private let liveVersions = Mutex<[String: Int]>([:])

    init(configuration: DepotConfiguration, ledger: Ledger, store: CatalogStore, loops: Int, logger: Logger,
         serverAPI: ServerAPIClient? = nil, webhookSchedule: RetrySchedule = .webhooks,
         consumptionSchedule: RetrySchedule = .consumption) {
        self.ledger = ledger
        self.store = store
        let owner = UUID().uuidString
        let webhooks = configuration.webhookURL.flatMap { url in
            configuration.webhookSecret.map { secret in
                WebhookDispatcher(url: url, secret: secret, ledger: ledger, owner: owner, schedule: webhookSchedule, logger: logger)
            }
        }
        self.webhooks = webhooks
        if let webhooks {
            // Every access change this instance writes, by whatever path, queues its event in the same transaction.
            ledger.raiseAccessEvents { [store] change in
                let pack = change.productID.flatMap { product in store.current?.catalog.products.first { $0.id == product }?.pack }
                return webhooks.accessEntry(change, pack: pack)
            }
        }
        consumption = configuration.consumptionInfo.isOn ? serverAPI.map {
            ConsumptionAnswers(client: $0, ledger: ledger, store: store, webhooks: webhooks, owner: owner,
                               appleTimeout: configuration.appleTimeout, schedule: consumptionSchedule, logger: logger)
        } : nil
        // What is live at start is known, recording or not: only a later change announces a version.
        liveVersions.withLock { $0 = Self.liveVersions(store) }
        guard configuration.deliveryRecord.isOn else {
            deliveries = nil
            return
        }
        let manifest: @Sendable (String, Int) -> PackManifest? = { [store] pack, version in
            store.current?.content.packs[pack]?.versions[version]?.manifest
        }
        deliveries = DeliveryRecorder(loops: loops, ledger: ledger, logger: logger, manifest: manifest, onProgress: { [ledger] progress in
            guard let webhooks else { return }
            for entry in progress {
                await Self.announceIfComplete(entry, ledger: ledger, manifest: manifest, webhooks: webhooks)
            }
        })
    }

    /// Starts gathering (on `onEachLoop`, the server's) and delivering webhooks.
    func start(onEachLoop: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> Void) {
        deliveries?.start(onEachLoop: onEachLoop)
        webhooks?.start()
        consumption?.start()
        announceVersionsMadeLiveWhileDown()
    }

    /// At start: a pack that announced a version before (its `pack.published` events are in the ledger) has its
    /// live version announced, which raises something only when that version went live while no server ran (a
    /// `depot publish`, promote or rollback meanwhile): each version is announced once. A pack never announced
    /// (a first start, webhooks just configured) raises nothing, as the initial load raises nothing.
    private func announceVersionsMadeLiveWhileDown() {
        guard let webhooks else { return }
        let live = liveVersions.withLock { $0 }.sorted { $0.key < $1.key }
        let snapshot = store.current
        Task(executorPreference: WorkerPool.shared) { [ledger] in
            for (pack, version) in live {
                guard let announced = try? await ledger.outboxItems(queue: .webhook, orderingKey: "pack:\(pack)"),
                      !announced.isEmpty else { continue }
                await Self.announce(pack: pack, version: version, snapshot: snapshot, webhooks: webhooks)
            }
        }
    }

    /// After the server stopped: writes the rest of the delivery record, then stops the webhooks.
    func stop() async {
        await deliveries?.stop()
        await consumption?.stop()
        await webhooks?.stop()
    }

    /// `/metrics` lines of the delivery record, the webhook queue and the consumption answers (each when on).
    func metricsText() -> String {
        var out = ""
        if let deliveries {
            out += "# HELP depot_delivery_record_dropped_total Pieces of pack files sent that the delivery record dropped because too many purchase files waited for the ledger.\n"
            out += "# TYPE depot_delivery_record_dropped_total counter\n"
            out += "depot_delivery_record_dropped_total \(deliveries.droppedPieceCount)\n"
        }
        return out + (webhooks?.metricsText() ?? "") + (consumption?.metricsText() ?? "")
    }

    /// Called after each catalog swap: a pack whose live version changed raises `pack.published` (once per
    /// version, whichever instance sees it first).
    func catalogSwapped() {
        let now = Self.liveVersions(store)
        let changed = liveVersions.withLock { known -> [(String, Int)] in
            defer { known = now }
            return now.filter { known[$0.key] != $0.value }.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
        }
        guard let webhooks, !changed.isEmpty else { return }
        let snapshot = store.current
        Task(executorPreference: WorkerPool.shared) {
            for (pack, version) in changed {
                await Self.announce(pack: pack, version: version, snapshot: snapshot, webhooks: webhooks)
            }
        }
    }

    /// Queues `pack.published` for `version` of `pack` (once per version, whichever instance or start queues it first).
    private static func announce(pack: String, version: Int, snapshot: DepotSnapshot?, webhooks: WebhookDispatcher) async {
        let manifest = snapshot?.content.packs[pack]?.versions[version]?.manifest
        await webhooks.emit(.packPublished, orderingKey: "pack:\(pack)", data: WebhookEventData(
            productId: manifest?.productId, pack: pack, version: version, chunks: manifest.map { $0.files.reduce(0) { $0 + $1.chunks.count } },
            bytes: manifest?.downloadBytes), once: "\(pack):\(version)")
    }

    private static func liveVersions(_ store: CatalogStore) -> [String: Int] {
        (store.current?.content.packs ?? [:]).compactMapValues(\.current)
    }

    /// Raises `pack.delivered` when the purchase now has every chunk of the version.
    private static func announceIfComplete(_ progress: DeliveryProgress, ledger: Ledger, manifest: (String, Int) -> PackManifest?,
                                           webhooks: WebhookDispatcher) async {
        guard let version = manifest(progress.pack, progress.version) else { return }
        let total = version.files.reduce(0) { $0 + $1.chunks.count }
        guard let records = try? await ledger.deliveries(originalTransactionID: progress.originalTransactionID) else { return }
        let delivered = records.filter { $0.pack == progress.pack && $0.version == progress.version }
        guard delivered.reduce(0, { $0 + $1.chunks.count }) >= total else { return }
        await webhooks.emit(.packDelivered, orderingKey: progress.originalTransactionID, data: WebhookEventData(
            originalTransactionId: progress.originalTransactionID, productId: version.productId, pack: progress.pack,
            version: progress.version, chunks: total, bytes: delivered.reduce(0) { $0 + $1.deliveredBytes }),
            once: "\(progress.originalTransactionID):\(progress.pack):\(progress.version)")
    }
}
