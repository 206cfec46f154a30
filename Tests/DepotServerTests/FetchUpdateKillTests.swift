import AppStoreSimulator
import DepotClient
import DepotCore
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// `pack-updates.md` §2: `depot fetch` into a directory holding an older version updates it, survives SIGKILL at
/// random points (the old version whole until the switch, the new one whole after it), and reports what it reused.
@Suite("depot fetch updates")
struct FetchUpdateKillTests {
    @Test func anUpdateKilledAtRandomPointsCompletesAndNeverMixesVersions() async throws {
        let appStore = try SimulatedAppStore(bundleID: "com.example.depot")
        defer { Task { await appStore.stop() } }
        let depot = try await TestDepot.start {
            $0.appleVerifyURL = appStore.productionURL
            $0.appleSandboxVerifyURL = appStore.sandboxURL
        }
        defer { Task { await depot.stop() } }
        var level = ContentChunkerFixture.bytes(12 << 20, seed: 21)
        let v1: [String: [UInt8]] = ["level.bin": level, "gone.bin": ContentChunkerFixture.bytes(300_000, seed: 22)]
        try PackUpdateTests.publish(depot, files: v1)
        let receipt = appStore.issueReceipt([.init(productID: "com.example.depot.world", transactionID: "1000000000000077")])
        depot.tree.write("receipt.txt", receipt)
        let out = depot.tree.path + "/device/world"
        let arguments = ["fetch", "--server", depot.baseURL, "--receipt", depot.tree.path + "/receipt.txt", "--pack", "world", "--out", out]
        // Child processes run from a dedicated thread: a cooperative thread blocked for a whole `depot fetch`
        // stalls every other suite's tasks.
        let first = try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(PackUpdateTests.tree(out) == v1)

        // Version 2: a fix in the middle, an insertion, a file removed, one added.
        level.replaceSubrange(6_000_000..<6_004_096, with: ContentChunkerFixture.bytes(4096, seed: 23))
        level.insert(contentsOf: ContentChunkerFixture.bytes(100_000, seed: 24), at: 9_000_000)
        let v2: [String: [UInt8]] = ["level.bin": level, "new/notes.txt": Array("fixed the level".utf8)]
        try PackUpdateTests.publish(depot, files: v2)

        var killed = 0
        for attempt in 0..<6 {
            let child = try SpawnedChild.start(ProcessRunner.depotExecutable, arguments)
            // Killed at a random moment after the update has started (from a dedicated thread, so the delay is
            // real whatever the cooperative pool is doing); the first attempt as soon as the update starts.
            let delay = attempt == 0 ? 0 : UInt32.random(in: 0...UInt32(60_000 * attempt))
            let wasKilled = try await OffPool.run { () -> Bool in
                var output = ""
                while !output.contains("updating from version 1"), let data = try child.output.read(upToCount: 1), !data.isEmpty {
                    output += String(decoding: data, as: UTF8.self)
                }
                usleep(delay)
                child.send(SIGKILL)
                child.waitForExit()
                return child.endedBySignal
            }
            if wasKilled { killed += 1 }
            // Never a mix: the old version whole until the switch, the new one after it.
            let now = PackUpdateTests.tree(out)
            #expect(now == v1 || now == v2, "attempt \(attempt): \(now.keys.sorted())")
            if now == v2 { break }
        }
        #expect(killed >= 1)

        // A run killed between writing the journal's temporary and renaming it leaves that file: the next run's
        // save renames it away.
        depot.tree.write("device/world/" + PackDownloadOptions.journalFileName + ".tmp", "{\"pack\": \"wor")
        let last = try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(PackUpdateTests.tree(out) == v2)
        // Nothing else is left among the pack's files or beside them: no temporary of any kind.
        let entries = Set(FileManager.default.subpaths(atPath: out) ?? [])
        #expect(entries == Set(v2.keys).union(["new", PackDownloadOptions.journalFileName,
                                                               PackDownloadOptions.journalFileName + ".manifest"]), "\(entries.sorted())")
        #expect(try FileManager.default.contentsOfDirectory(atPath: depot.tree.path + "/device") == ["world"])
    }

    @Test func fetchIntoAnOlderVersionPrintsReusedAndFetched() async throws {
        let appStore = try SimulatedAppStore(bundleID: "com.example.depot")
        defer { Task { await appStore.stop() } }
        let depot = try await TestDepot.start {
            $0.appleVerifyURL = appStore.productionURL
            $0.appleSandboxVerifyURL = appStore.sandboxURL
        }
        defer { Task { await depot.stop() } }
        var level = ContentChunkerFixture.bytes(4 << 20, seed: 31)
        try PackUpdateTests.publish(depot, files: ["level.bin": level])
        let receipt = appStore.issueReceipt([.init(productID: "com.example.depot.world", transactionID: "1000000000000078")])
        depot.tree.write("receipt.txt", receipt)
        let out = depot.tree.path + "/device/world"
        let arguments = ["fetch", "--server", depot.baseURL, "--receipt", depot.tree.path + "/receipt.txt", "--pack", "world", "--out", out]
        #expect(try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments).status == 0)
        level.replaceSubrange(2_000_000..<2_004_096, with: ContentChunkerFixture.bytes(4096, seed: 32))
        try PackUpdateTests.publish(depot, files: ["level.bin": level])
        let update = try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments)
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stdout.contains("updating from version 1:"), "\(update.stdout)")
        let line = try #require(update.stdout.split(separator: "\n").first { $0.contains("reused") })
        // About 4 MiB reused; a chunk or two of 8 KiB fetched.
        #expect(line.contains("reused 4.0 MiB, fetched 0.0 MiB") || line.contains("reused 3.9 MiB, fetched 0.0 MiB"), "\(line)")
        #expect(PackUpdateTests.tree(out) == ["level.bin": level])
    }
}
