import AppStoreSimulator
import DepotCore
import DepotWire
import DepotServer
import DepotCrypto
import DepotTestSupport
import Foundation
import Testing

/// Issue 6: `depot fetch` on the command line (resume after SIGKILL, progress output) and `depot demo`.
@Suite("depot fetch and depot demo")
struct FetchAndDemoTests {
    @Test func fetchResumesAfterBeingKilled() async throws {
        let appStore = try SimulatedAppStore(bundleID: "com.example.depot")
        defer { Task { await appStore.stop() } }
        let depot = try await TestDepot.start {
            $0.appleVerifyURL = appStore.productionURL
            $0.appleSandboxVerifyURL = appStore.sandboxURL
        }
        defer { Task { await depot.stop() } }
        // A pack big enough to be killed part-way.
        try ClientLoopbackTests.publish(depot, pack: "world", files: ["a.bin": SecureRandom.bytes(24 << 20), "b/c.bin": SecureRandom.bytes(1000)],
                                        chunkSize: 256 * 1024)
        let receipt = appStore.issueReceipt([.init(productID: "com.example.depot.world", transactionID: "1000000000000042")])
        depot.tree.write("receipt.txt", receipt)
        let out = depot.tree.path + "/device"
        let arguments = ["fetch", "--server", depot.baseURL, "--receipt", depot.tree.path + "/receipt.txt", "--pack", "world", "--out", out]

        // First run: killed with SIGKILL as soon as it reports progress.
        let child = try SpawnedChild.start(ProcessRunner.depotExecutable, arguments)
        // Killed once 40 % is reported (plain progress lines come every 10 %): the journal is saved every 8 MiB
        // verified (a third of this pack) or quarter second, before the progress is told, so some chunks are journaled.
        var output = ""
        func reportedForty(_ text: String) -> Bool {
            text.split(separator: "\n").contains { line in
                line.hasPrefix("progress ") && (Int(line.dropFirst(9).prefix { $0.isNumber }) ?? 0) >= 40
            }
        }
        while !reportedForty(output), let data = try child.output.read(upToCount: 1), !data.isEmpty {
            output += String(decoding: data, as: UTF8.self)
        }
        child.send(SIGKILL)
        child.waitForExit()
        #expect(child.endedBySignal)
        #expect(output.contains("downloading version 1"))

        // Second run resumes and finishes; every file matches the manifest.
        let second = try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("resuming version 1"), "\(second.stdout)")
        #expect(second.stdout.contains("done: 2 files"))
        #expect(second.stdout.contains("progress 100%"))
        let manifest = try #require(depot.app.store.current?.content.packs["world"]?.live?.manifest)
        for file in manifest.files {
            let data = try #require(FileManager.default.contents(atPath: out + "/" + file.path))
            #expect(Hex.encode(SHA256.hash([UInt8](data))) == file.sha256)
        }
        // Running it again finds everything verified and fetches nothing.
        let third = try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments)
        #expect(third.status == 0)
        #expect(third.stdout.contains("resuming version 1: 24.0 MiB of 24.0 MiB"), "\(third.stdout)")
    }

    @Test func fetchReportsARejectedPurchaseAndUsageErrors() async throws {
        let appStore = try SimulatedAppStore(bundleID: "com.example.depot")
        defer { Task { await appStore.stop() } }
        let depot = try await TestDepot.start {
            $0.appleVerifyURL = appStore.productionURL
            $0.appleSandboxVerifyURL = appStore.sandboxURL
        }
        defer { Task { await depot.stop() } }
        let receipt = appStore.issueReceipt([.init(productID: "com.example.depot.coins100", transactionID: "1000000000000043")])
        depot.tree.write("receipt.txt", receipt)
        let rejected = try await ProcessRunner.run(ProcessRunner.depotExecutable, [
            "fetch", "--server", depot.baseURL, "--receipt", depot.tree.path + "/receipt.txt", "--pack", "level2", "--out", depot.tree.path + "/out",
        ])
        #expect(rejected.status == 1)
        #expect(rejected.stderr.contains("does not unlock pack level2"))
        let usage = try await ProcessRunner.run(ProcessRunner.depotExecutable, ["fetch", "--server", depot.baseURL, "--pack", "level2", "--out", "x"])
        #expect(usage.status == 64)
    }

    @Test func demoTellsTheWholeStoryAndExitsZero() async throws {
        let result = try await ProcessRunner.run(ProcessRunner.depotExecutable, ["demo"], currentDirectory: TestDepot.repositoryRoot)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for expected in ["304 Not Modified", "entitlement: pack level2", "interrupted after", "resumed with", "ok",
                         "lists it after", "reused", "validated through the App Store Server API", "catches up", "→ 403",
                         "rejected: revoked", "The demo is over"] {
            #expect(result.stdout.contains(expected), "missing \(expected)")
        }
        // After the download completed, Apple's refund request was answered from the delivery record.
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let answered = lines.firstIndex { $0.contains("posted CONSUMPTION_REQUEST for transaction") }
        let delivered = lines.firstIndex {
            $0.contains("Send Consumption Information arrived at Apple: deliveryStatus DELIVERED, consumptionPercentage 100000 milliunits")
                && $0.hasSuffix("refundPreference DECLINE")
        }
        let checked = lines.lastIndex { $0.hasSuffix("… ok") }
        // All three lines must be there, in this order: the download checked, then the request, then the answer.
        let order = try #require(answered.flatMap { a in delivered.flatMap { d in checked.map { c in (c, a, d) } } },
                                 "a line is missing:\n\(result.stdout)")
        #expect(order.0 < order.1 && order.1 < order.2, "\(result.stdout)")
    }
}
