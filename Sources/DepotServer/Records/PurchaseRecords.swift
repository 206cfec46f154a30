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
package final class PurchaseRecords: Sendable {
    let deliveries: DeliveryRecorder?
    let webhooks: WebhookDispatcher?
    /// The consumption answers, with `--consumption-info on` and a Server API client.
    package let consumption: ConsumptionAnswers?
    private let ledger: Ledger
    private let store: CatalogStore
    private let logger: Logger
    /// The live versions this instance last recorded in the ledger (nil before the first time).
    private let liveVersions = Mutex<[String: Int]?>(nil)
    /// The last reconciliation of the live versions with the ledger (each waits for the one before).
    private let reconciling = Mutex<Task<Void, Never>?>(nil)

    init(configuration: DepotConfiguration, ledger: Ledger, store: CatalogStore, loops: Int, logger: Logger,
         serverAPI: ServerAPIClient? = nil, webhookSchedule: RetrySchedule = .webhooks,
         consumptionSchedule: RetrySchedule = .consumption) {
        self.ledger = ledger
        self.store = store
        self.logger = logger
        let owner = UUID().uuidString
        let webhooks = configuration.webhookURL.flatMap { url in
            configuration.webhookSecret.map { secret in
                WebhookDispatcher(url: url, secret: secret, ledger: ledger, owner: owner, schedule: webhookSchedule, logger: logger)
            }
        }
        self.webhooks = webhooks
        let manifest: @Sendable (String, Int) -> PackManifest? = { [store] pack, version in
            store.current?.content.packs[pack]?.versions[version]?.manifest
        }
        if let webhooks {
            // Every access change this instance writes, by whatever path, queues its event in the same transaction.
            ledger.raiseAccessEvents { [store] change in
                let pack = change.productID.flatMap { product in store.current?.catalog.products.first { $0.id == product }?.pack }
                return webhooks.accessEntry(change, pack: pack)
            }
            // So does the delivery-record write that gives a purchase the last chunk of a version.
            ledger.raiseDeliveryEvents { completion in
                webhooks.deliveredEntry(completion, productID: manifest(completion.pack, completion.version)?.productId)
            }
        }
        consumption = configuration.consumptionInfo.isOn ? serverAPI.map {
            ConsumptionAnswers(client: $0, ledger: ledger, store: store, webhooks: webhooks, owner: owner,
                               appleTimeout: configuration.appleTimeout, schedule: consumptionSchedule, logger: logger)
        } : nil
        guard configuration.deliveryRecord.isOn else {
            deliveries = nil
            return
        }
        deliveries = DeliveryRecorder(loops: loops, ledger: ledger, logger: logger, interval: .seconds(configuration.deliveryRecordInterval),
                                      manifest: manifest, onProgress: { _ in
            webhooks?.worker.wake()
        })
    }

    /// Starts gathering (on `onEachLoop`, the server's) and delivering webhooks, and records the live versions
    /// (announcing those made live while no server ran).
    func start(onEachLoop: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> Void) {
        deliveries?.start(onEachLoop: onEachLoop)
        webhooks?.start()
        consumption?.start()
        reconcileLiveVersions()
    }

    /// After the server stopped: writes the rest of the delivery record, then stops the webhooks.
    func stop() async {
        await reconciling.withLock { $0 }?.value
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
    /// change, whichever instance records it first).
    func catalogSwapped() {
        reconcileLiveVersions()
    }

    /// Waits for the live versions seen so far to be reconciled with the ledger (tests).
    package func liveVersionsReconciled() async {
        await reconciling.withLock { $0 }?.value
    }

    /// Records the live versions of the current catalog in the ledger, queueing `pack.published` for each change
    /// in the same transaction (`Ledger.reconcileLiveVersions`): against what this instance recorded last, or,
    /// before its first success, against the ledger alone (a version made live while no server ran is
    /// announced; a ledger that never recorded any is filled silently). Runs after the reconciliation before it;
    /// a failure is logged and the next swap or start tries again.
    private func reconcileLiveVersions() {
        // What is live now (the next swap's state is the next reconciliation's).
        let snapshot = store.current
        let live = (snapshot?.content.packs ?? [:]).compactMapValues(\.current)
        reconciling.withLock { last in
            let before = last
            last = Task(executorPreference: WorkerPool.shared) { [self] in
                await before?.value
                let webhooks = webhooks
                do {
                    let previous = liveVersions.withLock { $0 }
                    let changes = try await ledger.reconcileLiveVersions(live, previous: previous, now: Date()) { change in
                        guard let webhooks else { return nil }
                        let manifest = snapshot?.content.packs[change.pack]?.versions[change.version]?.manifest
                        return webhooks.entry(.packPublished, orderingKey: "pack:\(change.pack)", data: WebhookEventData(
                            productId: manifest?.productId, pack: change.pack, version: change.version,
                            chunks: manifest.map { $0.files.reduce(0) { $0 + $1.chunks.count } }, bytes: manifest?.downloadBytes),
                            once: "\(change.pack):\(change.version):\(change.announcement)")?.1
                    }
                    liveVersions.withLock { $0 = live }
                    if !changes.isEmpty { webhooks?.worker.wake() }
                } catch {
                    logger.warning(.webhook, "pack.published: cannot record the live versions in the ledger: \(error)")
                }
            }
        }
    }
}
