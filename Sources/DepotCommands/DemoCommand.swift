import AppStoreSimulator
import ArgumentParsing
import DepotClient
import DepotCore
import DepotCrypto
import DepotServer
import DepotWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `depot demo`: the whole story on loopback, with only the App Store simulated (spec §5).
struct DemoCommand: Command {
    static let name = "demo"
    static let synopsis: String? = ""
    static let summary = "Tell the whole story on loopback with a simulated App Store: buy, unlock, download, a refund request answered, publish, a refund caught up after a restart."

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func run() async throws -> Int32 {
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("depot-demo-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: workspace) }
        try await Self.story(workspace: workspace)
        say("\nThe demo is over; its files are removed.")
        return 0
    }

    static func step(_ number: Int, _ title: String) {
        say("\n\(number). \(title)")
    }

    static func story(workspace: String) async throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: workspace, withIntermediateDirectories: true)
        let paths = DepotPaths(catalogDirectory: workspace + "/catalog", contentDirectory: workspace + "/content",
                               dataDirectory: workspace + "/var")
        // A fresh shop every time (the same one, whatever ./catalog holds): two products without packs and Level 2.
        try DemoShop.build(paths, scratch: workspace + "/sources")
        say("Depot demo: a server on loopback, a simulated App Store, and the reference client, in \(workspace)")

        // The only simulated part: Apple. A verifyReceipt stand-in and the App Store Server API, signing with a PKI
        // made now; Depot gets the simulated In-App Purchase key, so receipts go through the Server API.
        let bundleID = "com.example.depot"
        let appStore = try SimulatedAppStore(bundleID: bundleID)
        let api = appStore.serverAPI
        let rootFile = workspace + "/simulated-apple-root.pem"
        try api.pki.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)

        var configuration = DepotConfiguration()
        configuration.port = 0
        configuration.paths = paths
        configuration.bundleID = bundleID
        configuration.appleVerifyURL = appStore.productionURL
        configuration.appleSandboxVerifyURL = appStore.sandboxURL
        configuration.appleRootCertificateFiles = [rootFile]
        configuration.appleAPIKeyFile = try api.key.writeKeyFile(into: workspace)
        configuration.appleAPIKeyID = api.key.keyID
        configuration.appleAPIIssuer = api.key.issuerID
        configuration.appleAPIURL = appStore.apiURL
        configuration.appleAPISandboxURL = appStore.apiSandboxURL
        configuration.accessLog = .off
        // Refund requests are answered from the delivery record (step 6).
        configuration.consumptionInfo = .on
        let serverLog = LogOutput(capturing: true)
        var app = try await DepotApp.start(configuration, logger: Logger(output: serverLog))
        let running = RunningApp(app)
        defer { Task { await running.current.stop(); await appStore.stop() } }
        let base = URL(string: app.baseURL)!
        let client = DepotClient(baseURL: base, cacheDirectory: URL(fileURLWithPath: workspace + "/device/cache"))
        say("server: \(app.baseURL)   simulated App Store (Server API and verifyReceipt): \(appStore.apiURL.absoluteString)")

        step(1, "The app asks which products exist (GET /products_v1.json)")
        let ids = try await client.productIDs()
        say("   \(ids.list.joined(separator: ", "))")
        let again = try await client.productIDs()
        say("   asked again: \(again.source == .notModified ? "304 Not Modified, the cached list is used" : "\(again.source)")")

        step(2, "The user buys Level 2; the app sends its receipt (POST /v1/receipts)")
        let purchase = api.purchase("com.example.depot.level2", customer: "demo-player")
        let transactionID = purchase.transactionID
        let receipt = try api.appReceipt(for: "demo-player")
        let unlocked = try await client.unlock(receipt: Data(receipt.utf8))
        guard let entitlement = unlocked.entitlements.first(where: { $0.pack == "level2" }) else {
            throw Failure(description: "the receipt did not unlock level2: \(unlocked.rejected)")
        }
        say("   validated through the App Store Server API: transaction \(transactionID) read from the receipt, Get Transaction History asked (\(api.calls(.transactionHistory)) call), every signed transaction verified")
        say("   entitlement: pack \(entitlement.pack), transaction \(entitlement.originalTransactionId), token valid until \(entitlement.tokenExpires.map { "\($0)" } ?? "?")")

        step(3, "The download starts, and the app is closed part-way")
        let destination = URL(fileURLWithPath: workspace + "/device/packs/level2")
        // One chunk at a time, so the interruption falls between chunks.
        let first = client.downloader(for: entitlement, to: destination, options: PackDownloadOptions(parallelChunks: 1, runBytes: 1))
        var paused = false
        for try await event in first.download() {
            if case .progress(let progress) = event, progress.completedBytes * 3 >= progress.totalBytes { await first.pause() }
            if case .paused = event { paused = true }
        }
        // What the downloader holds once it stopped (a chunk already in flight when the pause came is kept too).
        let stoppedAt = await first.progress
        if paused {
            say("   interrupted after \(stoppedAt.completedBytes) of \(stoppedAt.totalBytes) bytes (the chunks verified so far are kept)")
        } else {
            say("   (the pack was small enough to finish before the interruption)")
        }

        step(4, "The app starts again and resumes where it stopped (Range + If-Range, SHA-256 per chunk)")
        let second = client.downloader(for: entitlement, to: destination)
        var resumed: Int64 = 0
        var finished: DownloadManifest?
        for try await event in second.download() {
            if case .started(_, let bytes) = event { resumed = bytes }
            if case .completed(let manifest) = event { finished = manifest }
        }
        guard let manifest = finished else { throw Failure(description: "the resumed download did not finish") }
        say("   resumed with \(resumed) of \(manifest.downloadBytes) bytes already verified; fetched the other \(manifest.downloadBytes - resumed); "
            + "\(manifest.files.count) files complete")

        step(5, "Every file is checked against the manifest")
        for file in manifest.files {
            guard let data = fm.contents(atPath: destination.path + "/" + file.path), Hex.encode(SHA256.hash([UInt8](data))) == file.sha256 else {
                throw Failure(description: "\(file.path) does not match its SHA-256")
            }
            say("   \(file.path): \(file.size) bytes, sha256 \(file.sha256.prefix(16))… ok")
        }

        let answered = try await Self.showRefundRequest(api: api, server: app.baseURL, transactionID: transactionID)
        guard answered == "DELIVERED" else { throw Failure(description: "the complete download was answered \(answered), not DELIVERED") }

        step(7, "The developer publishes a new level, without an app update (depot publish)")
        let publisher = Publisher(paths: configuration.paths)
        let published = try publisher.publish(PublishRequest(pack: "level5", productID: DemoShop.level5, type: .nonConsumable,
                                                             title: "Level 5: Canyon", description: "Eight stages in the red canyon.",
                                                             sources: try DemoShop.level5Sources(in: workspace + "/sources")))
        say("   published pack \(published.pack) version \(published.version) (\(published.downloadBytes) bytes)")
        let started = Date()
        var visible = false
        while Date().timeIntervalSince(started) < 5 {
            let list = try await client.productIDs()
            if list.list.contains("com.example.depot.level5") {
                say("   the running server lists it after \(Int(Date().timeIntervalSince(started) * 1000)) ms: \(list.list.joined(separator: ", "))")
                visible = true
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard visible else { throw Failure(description: "the new level did not appear in products_v1.json") }

        try await Self.showUpdate(client: client, publisher: publisher, configuration: configuration, source: workspace + "/sources/level5",
                                  device: workspace + "/device/level5")

        step(9, "The server is stopped; meanwhile the user gets a refund, and Apple's notification finds nobody")
        await app.stop()
        api.refund(transactionID)
        say("   Apple (simulated) refunded transaction \(transactionID); its REFUND notification waits in Apple's notification history")
        app = try await DepotApp.start(configuration, logger: Logger(output: serverLog))
        running.current = app
        guard await app.waitForNotificationSyncs(1, timeout: 30) else { throw Failure(description: "the notification catch-up did not run") }
        say("   the server starts again and catches up: it reads Apple's notification history since its last sync (\(api.calls(.notificationHistory)) calls so far)")
        let restarted = URL(string: app.baseURL)!
        let sameDevice = DepotClient(baseURL: restarted, cacheDirectory: URL(fileURLWithPath: workspace + "/device/cache"))

        step(10, "The old token no longer opens the pack")
        var manifestRequest = URLRequest(url: restarted.appendingPathComponent(WirePath.packManifest(pack: "level2")))
        manifestRequest.setValue("Bearer \(entitlement.token)", forHTTPHeaderField: "Authorization")
        let (body, refusal) = try await URLSession.shared.data(for: manifestRequest)
        let status = (refusal as? HTTPURLResponse)?.statusCode ?? 0
        say("   GET \(WirePath.packManifest(pack: "level2")) → \(status) \(String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))")
        guard status == 403 else { throw Failure(description: "expected 403 revoked after the refund, got \(status)") }
        let retry = try await sameDevice.unlock(receipt: Data(receipt.utf8))
        say("   validating the receipt again: \(retry.entitlements.count) entitlements, rejected: \(retry.rejected.map { $0.reason.rawValue }.joined(separator: ", "))")

        await app.stop()
        await appStore.stop()
    }
}

/// The server the demo runs now (it restarts once), for the clean-up.
private final class RunningApp: @unchecked Sendable {
    // Set on the demo's own task only; read by the clean-up after it.
    var current: DepotApp

    init(_ app: DepotApp) { current = app }
}
