import AppStoreSimulator
import ArgumentParsing
import DepotCommands
import DepotServer
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// `depot notifications sync` and `depot notifications test` (spec app-store-server-api §6), run through
/// depot's own command table against the simulated store.
@Suite struct NotificationCommandTests {
    /// Runs the `depot` binary with `arguments` until it exits (the commands bound their own time), on a
    /// thread of its own.
    static func depot(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try await OffPool.run { try ProcessRunner.run(ProcessRunner.depotExecutable, arguments) }
        return (result.status, result.stdout, result.stderr)
    }

    /// The options that point a command at the fixture's store, key, roots and data directory.
    static func arguments(_ fixture: PurchaseFixture) -> [String] {
        let configuration = fixture.depot.app.configuration
        return ["--data", configuration.dataDirectory, "--bundle-id", configuration.bundleID,
                "--apple-root-certs", fixture.certificates.path + "/root.pem",
                "--apple-api-key", configuration.appleAPIKeyFile ?? "", "--apple-api-key-id", configuration.appleAPIKeyID ?? "",
                "--apple-api-issuer", configuration.appleAPIIssuer ?? "",
                "--apple-api-url", fixture.apple.apiURL.absoluteString, "--apple-api-sandbox-url", fixture.apple.apiSandboxURL.absoluteString]
    }

    /// A refund the server missed: `depot notifications sync` applies it to the ledger and says so; run
    /// again it sees the same notifications and changes nothing.
    @Test func syncPrintsWhatItSawAndChanged() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let purchase = api.purchase(PurchaseFixture.level2, customer: "ada")
            let bought = try await fixture.postReceipt(try api.appReceipt(for: "ada"))
            let token = try #require(bought.token)
            api.refund(purchase.transactionID)

            let run = try await Self.depot(["notifications", "sync"] + Self.arguments(fixture))
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.contains("Production "), "\(run.stdout)")
            #expect(run.stdout.hasSuffix("saw 2 notifications, 1 changed something\n"), "\(run.stdout)")

            let since = try await Self.depot(["notifications", "sync", "--since", InternetDateText.format(Date().addingTimeInterval(-3600))]
                                                                  + Self.arguments(fixture))
            #expect(since.status == 0, "\(since)")
            #expect(since.stdout.hasSuffix("saw 2 notifications, 0 changed something\n"), "\(since.stdout)")

            // The server's in-memory view comes from the ledger at start.
            try await fixture.restartDepot()
            #expect(try await fixture.packStatus("level2", token: token).status == 403)
        }
    }

    /// A bad `--since` is a usage error; without a key the command names the option.
    @Test func syncRefusesBadOptions() async throws {
        let bad = try await Self.depot(["notifications", "sync", "--since", "yesterday"])
        #expect(bad.status == 64, "\(bad)")
        #expect(bad.stderr.contains("--since"))
        let data = TemporaryDirectory("depot-sync")
        let keyless = try await Self.depot(["notifications", "sync", "--data", data.path])
        #expect(keyless.status == 1, "\(keyless)")
        #expect(keyless.stderr.contains("--apple-api-key"), "\(keyless.stderr)")
    }

    /// `depot notifications test` asks Apple for a TEST notification and polls until it was delivered to
    /// the app's notification URL (here the running server); without a URL configured at Apple it fails.
    @Test func testReportsWhetherTheNotificationArrived() async throws {
        try await PurchaseFixture.run(serverAPI: true) { fixture in
            let api = fixture.apple.serverAPI
            let refused = try await Self.depot(["notifications", "test", "--wait", "2"] + Self.arguments(fixture).dropFirst(2))
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stdout.contains("did not arrive"), "\(refused.stdout)")
            #expect(refused.stdout.contains("4040007"), "Apple's reason: \(refused.stdout)")

            api.notificationURL = URL(string: fixture.depot.baseURL + "/v1/notifications/appstore")
            let arrived = try await Self.depot(["notifications", "test", "--wait", "60"] + Self.arguments(fixture).dropFirst(2))
            #expect(arrived.status == 0, "\(arrived)")
            #expect(arrived.stdout.contains("SUCCESS"), "\(arrived.stdout)")
            #expect(arrived.stdout.contains("the test notification arrived"), "\(arrived.stdout)")
            #expect(api.notifications(in: .production).map(\.type) == ["TEST"], "the refused request sent nothing")
        }
    }
}
