import AppStoreSimulator
import ArgumentParsing
import DepotServer
import DepotTestSupport
import Foundation
import Ledger
import Testing

/// Two instances on one PostgreSQL ledger (spec app-store-server-api §6): one instance syncs a given
/// window, the other skips it, and a REFUND that happened while both were down is applied exactly once and
/// seen by both.
@Suite struct NotificationSyncInstancesTests {
    @Test func twoInstancesSyncOneWindowOnce() async throws {
        let cluster = try await PostgresCluster.shared()
        let database = try await cluster.createDatabase()
        let location = try LedgerLocation(parsing: cluster.uri(database: database))
        let store = try SimulatedAppStore(bundleID: PurchaseFixture.bundleID)
        let files = TemporaryDirectory("depot-instances")
        let configuration = try DepotConfiguration.simulatedServerAPI(store, files: files)
        let first = try await Ledger.open(location, dataDirectory: files.path, poolSize: 2)
        let second = try await Ledger.open(location, dataDirectory: files.path, poolSize: 2)
        let logs = LogOutput(capturing: true)
        let one = try AppStoreNotifications.notificationSync(configuration, ledger: first, logger: Logger(output: logs))
        let two = try AppStoreNotifications.notificationSync(configuration, ledger: second, logger: Logger(output: logs))

        let api = store.serverAPI
        let purchase = api.purchase(PurchaseFixture.level2, customer: "ada")
        _ = try await first.record([LedgerPurchase(transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
                                                   productID: purchase.productID, environment: "Production", purchaseDate: purchase.purchaseDate,
                                                   source: .receipt)],
                                   account: nil, policy: .transfer, now: Date())
        // A second ago: the history leaves out the window's end itself, so a refund on the millisecond the sync
        // reads the clock would belong to the next window.
        api.refund(purchase.transactionID, at: Date().addingTimeInterval(-1))

        // The first instance's production page takes a second; the second instance starts meanwhile.
        api.failNext(1, with: .delay(seconds: 1), endpoint: .notificationHistory)
        async let firstReport = one.syncOnce()
        var waited = 0
        while api.calls(.notificationHistory) == 0 && waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        let secondReport = await two.syncOnce()
        let reports = await [firstReport, secondReport]

        let production = reports.map { $0.windows.first { $0.environment == "Production" } }
        #expect(production[0]?.outcome == .synced, "\(reports)")
        if case .skipped? = production[1]?.outcome {} else { Issue.record("the second instance must skip the held window: \(reports)") }
        #expect(reports.map(\.changed).reduce(0, +) == 1, "the refund is applied once: \(reports)")
        #expect(reports.map(\.new).reduce(0, +) == 2, "the purchase's notification and the refund, each once: \(reports)")
        let sandbox = reports.compactMap { $0.windows.first { $0.environment == "Sandbox" } }
        let synced = sandbox.filter { $0.outcome == .synced }
        #expect(!synced.isEmpty)
        if synced.count == 2, let a = synced[0].start, let b = synced[1].start, let aEnd = synced[0].end, let bEnd = synced[1].end {
            #expect(aEnd <= b.addingTimeInterval(0.001) || bEnd <= a.addingTimeInterval(0.001), "sandbox windows must not overlap: \(sandbox)")
        }

        // Both instances' access indexes show the revocation (the second through the change feed).
        for ledger in [first, second] {
            var state = ledger.access(originalTransactionID: purchase.originalTransactionID, account: nil)
            var tries = 0
            while state != .revoked && tries < 300 {
                try await Task.sleep(for: .milliseconds(10))
                state = ledger.access(originalTransactionID: purchase.originalTransactionID, account: nil)
                tries += 1
            }
            #expect(state == .revoked)
        }
        // The next sync of either instance starts where the first ended.
        let next = await two.syncOnce()
        #expect(next.windows.first?.outcome == .synced)
        #expect(next.seen == 0, "\(next)")

        await first.close()
        await second.close()
        await store.stop()
        try await cluster.dropDatabase(database)
    }
}
