import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Ledger
import Synchronization
import Testing

/// The notification catch-up (spec app-store-server-api §6): what Apple sent while Depot was down is read
/// back from Get Notification History and applied like a posted V2 notification, once.
@Suite struct NotificationSyncTests {
    /// Buys `level2` for `customer` through a receipt and returns the purchase and its working token.
    static func buy(_ fixture: PurchaseFixture, customer: String) async throws -> (SimulatedTransaction, String) {
        let api = fixture.apple.serverAPI
        let purchase = api.purchase(PurchaseFixture.level2, customer: customer)
        let response = try await fixture.postReceipt(try api.appReceipt(for: customer))
        #expect(response.status == 200, "\(response.summary)")
        let token = try #require(response.token)
        #expect(try await fixture.packStatus("level2", token: token).status == 307)
        return (purchase, token)
    }

    /// Equal to the millisecond (the ledger keeps App Store milliseconds).
    static func same(_ a: Date?, _ b: Date?) -> Bool {
        guard let a, let b else { return false }
        return abs(a.timeIntervalSince(b)) < 0.002
    }

    /// `/metrics` as text.
    static func metrics(_ fixture: PurchaseFixture) async throws -> String {
        try await fixture.get("/metrics").text
    }

    /// A REFUND while the server was stopped is applied by the sync at the next start, exactly once: the
    /// old token is refused, a second sync changes nothing, and the metrics count it.
    @Test func aRefundMissedWhileStoppedIsAppliedAfterTheRestart() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.notificationSync = 3600 }) { fixture in
            let api = fixture.apple.serverAPI
            #expect(await fixture.depot.app.waitForNotificationSyncs(1))
            let (purchase, token) = try await Self.buy(fixture, customer: "ada")
            try await fixture.restartDepot(between: {
                api.refund(purchase.transactionID)
            })
            #expect(await fixture.depot.app.waitForNotificationSyncs(1))
            let refused = try await fixture.packStatus("level2", token: token)
            #expect(refused.status == 403 && refused.errorCode == "revoked", "\(refused.summary)")
            let metrics = try await Self.metrics(fixture)
            #expect(metrics.contains("depot_notification_sync_total{outcome=\"ok\"} 2"), "\(metrics)")
            #expect(metrics.contains("depot_notifications_recovered_total 2"), "the purchase's notification and the REFUND: \(metrics)")

            let again = try #require(await fixture.depot.app.syncNotifications(since: Date().addingTimeInterval(-86_400)))
            #expect(again.succeeded)
            #expect(again.seen == 2 && again.new == 0 && again.changed == 0, "\(again)")
        }
    }

    /// A notification that arrived while the server was up is seen by the sync and changes nothing.
    @Test func aNotificationAlreadyReceivedChangesNothing() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let (purchase, token) = try await Self.buy(fixture, customer: "bea")
            api.notificationURL = URL(string: fixture.depot.baseURL + "/v1/notifications/appstore")
            api.refund(purchase.transactionID)
            await api.waitForDeliveries()
            #expect(try await fixture.packStatus("level2", token: token).status == 403)
            let report = try #require(await fixture.depot.app.syncNotifications(since: Date().addingTimeInterval(-86_400)))
            #expect(report.windows.map(\.environment) == ["Production", "Sandbox"])
            #expect(report.seen == 2, "\(report)")
            #expect(report.new == 1, "the purchase's ONE_TIME_CHARGE was not posted: \(report)")
            #expect(report.changed == 0, "\(report)")
        }
    }

    /// A failed sync leaves the window where it was: the next one covers it.
    @Test func aFailedSyncLeavesTheWindow() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let first = try #require(await fixture.depot.app.syncNotifications())
            #expect(first.succeeded, "\(first)")
            let (purchase, token) = try await Self.buy(fixture, customer: "cy")
            api.refund(purchase.transactionID)
            api.failNext(2, with: .generalInternalRetryable, endpoint: .notificationHistory)
            let failed = try #require(await fixture.depot.app.syncNotifications())
            #expect(!failed.succeeded)
            #expect(failed.windows.first?.outcome != .synced, "\(failed)")
            #expect(Self.same(failed.windows.first?.start, first.windows.first?.end), "the stored end starts the next window")
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
            let metrics = try await Self.metrics(fixture)
            #expect(metrics.contains("depot_notification_sync_total{outcome=\"failed\"} 1"), "\(metrics)")

            let next = try #require(await fixture.depot.app.syncNotifications())
            #expect(next.succeeded, "\(next)")
            let production = try #require(next.windows.first)
            #expect(Self.same(production.start, failed.windows.first?.start), "the failed window starts the next one")
            #expect(production.changed == 1, "\(next)")
            #expect(try await fixture.packStatus("level2", token: token).status == 403)

            let after = try #require(await fixture.depot.app.syncNotifications())
            #expect(Self.same(after.windows.first?.start, production.end), "the next window starts where the last success ended")
            #expect(after.seen == 0)
        }
    }

    /// The first sync covers the last 7 days; `since` reaches further back (at most 180 days, Apple's limit).
    @Test func theFirstWindowIsSevenDays() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let old = api.purchase(PurchaseFixture.level2, customer: "dee", purchaseDate: Date().addingTimeInterval(-20 * 86_400))
            api.refund(old.transactionID, at: Date().addingTimeInterval(-8 * 86_400))
            let recent = api.purchase(PurchaseFixture.level2, customer: "eli", purchaseDate: Date().addingTimeInterval(-10 * 86_400))
            api.refund(recent.transactionID, at: Date().addingTimeInterval(-6 * 86_400))

            let first = try #require(await fixture.depot.app.syncNotifications())
            let window = try #require(first.windows.first)
            #expect(abs(try #require(window.end).timeIntervalSince(try #require(window.start)) - 7 * 86_400) < 1)
            #expect(window.seen == 1 && window.changed == 1, "only the refund of 6 days ago: \(first)")

            let further = try #require(await fixture.depot.app.syncNotifications(since: Date().addingTimeInterval(-400 * 86_400)))
            #expect(further.succeeded, "a start past 180 days is moved to 180 days: \(further)")
            let production = try #require(further.windows.first)
            let span = try #require(production.end).timeIntervalSince(try #require(production.start))
            #expect(span <= 180 * 86_400 && span > 180 * 86_400 - 3600, "at most 180 days, a little less for clock skew")
            #expect(production.seen == 4 && production.changed == 1, "the two purchases and both refunds; of the refunds only the old one is new: \(further)")
        }
    }

    /// Without sandbox, only production's history is read.
    @Test func sandboxHistoryIsReadOnlyWhenSandboxIsAllowed() async throws {
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.allowSandbox = false }) { fixture in
            let report = try #require(await fixture.depot.app.syncNotifications())
            #expect(report.windows.map(\.environment) == ["Production"])
            #expect(fixture.apple.serverAPI.calls(.notificationHistory, environment: .sandbox) == 0)
        }
    }

    /// Without a key nothing syncs; with `--notification-sync 0` the server does not sync by itself.
    @Test func theSyncIsOffWithoutAKeyOrAtZero() async throws {
        try await PurchaseFixture.run { fixture in
            #expect(await fixture.depot.app.syncNotifications() == nil)
        }
        try await PurchaseFixture.run(serverAPI: true, configure: { $0.notificationSync = 0 }) { fixture in
            #expect(await fixture.depot.app.waitForNotificationSyncs(1, timeout: 1) == false)
            #expect(fixture.apple.serverAPI.calls() == 0)
        }
    }

    /// The next window starts on the very millisecond the last one ended, also when the clock read a fraction of
    /// a millisecond past it: Apple's history (like the simulator's) leaves out `endDate` itself, so a window
    /// that started a millisecond later would never see what happened on that millisecond.
    @Test func theNextWindowStartsOnTheMillisecondTheLastEnded() async throws {
        let store = try SimulatedAppStore(bundleID: PurchaseFixture.bundleID)
        let files = TemporaryDirectory("depot-sync-millisecond")
        var configuration = try DepotConfiguration.simulatedServerAPI(store, files: files)
        configuration.allowSandbox = false
        let ledger = try await Ledger.open(at: files.path + "/ledger.sqlite")
        // The first sync reads the clock 0.7 ms past a whole millisecond, the second 5 s later.
        let whole = (Date().timeIntervalSince1970 * 1000).rounded(.down) - 10_000
        let firstEnd = Date(timeIntervalSince1970: whole / 1000)
        let clock = Mutex(Date(timeIntervalSince1970: whole / 1000 + 0.0007))
        let sync = try AppStoreNotifications.notificationSync(configuration, ledger: ledger, logger: Logger(output: LogOutput(capturing: true)),
                                                              now: { clock.withLock { $0 } })
        let api = store.serverAPI
        let purchase = api.purchase(PurchaseFixture.level2, customer: "fay", purchaseDate: Date().addingTimeInterval(-30 * 86_400))
        api.refund(purchase.transactionID, at: firstEnd)

        let first = try #require(await sync.syncOnce().windows.first)
        #expect(first.outcome == .synced && first.seen == 0, "the refund is on the window's end, which Apple leaves out: \(first)")
        clock.withLock { $0 = $0.addingTimeInterval(5) }
        let second = try #require(await sync.syncOnce().windows.first)
        #expect(second.start == first.end,
                "starts at \(second.start.map { $0.timeIntervalSince1970 * 1000 } ?? 0) ms, the last ended at \(first.end.map { $0.timeIntervalSince1970 * 1000 } ?? 0) ms")
        #expect(second.outcome == .synced && second.seen == 1, "the next window holds the refund: \(second)")

        await ledger.close()
        await store.stop()
    }
}
