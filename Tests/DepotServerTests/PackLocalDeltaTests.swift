import DepotClient
import DepotCore
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// `pack-updates.md` §2 when the server no longer has the installed version: `?from=` answers `"delta": null`, and
/// `DepotClient` computes the reuse itself from the manifest it kept of the version it installed
/// (`.depot-download.json.manifest`), so the update still fetches only what changed (bytes counted on the server).
@Suite("pack updates from a pruned version")
struct PackLocalDeltaTests {
    static let savedManifest = PackDownloadOptions.journalFileName + ".manifest"

    /// Version 1 installed in `destination`, version 2 published, version 1 pruned on the server (`?from=1` now
    /// `"delta": null`). `expected` is the server's answer to `?from=1` before the prune: what a delta would have said.
    struct Setup {
        let depot: TestDepot
        let token: String
        let destination: String
        let v1: [String: [UInt8]]
        let v2: [String: [UInt8]]
        let expected: PackManifest
        var summary: PackDelta.Summary { expected.delta!.summary! }
        var total: Int64 { Int64(v2.values.reduce(0) { $0 + $1.count }) }
    }

    static func prunedSetup() async throws -> Setup {
        let depot = try await TestDepot.start()
        let (v1, v2) = PackUpdateTests.versions()
        try PackUpdateTests.publish(depot, files: v1)
        let token = try ClientLoopbackTests.token(depot, pack: "world")
        let destination = depot.tree.path + "/device/world"
        _ = try await PackUpdateTests.downloader(depot, into: destination, token: token).start()
        #expect(PackUpdateTests.tree(destination) == v1)
        #expect(FileManager.default.fileExists(atPath: destination + "/" + savedManifest))

        try PackUpdateTests.publish(depot, files: v2)
        let auth = ["Authorization": "Bearer \(token)"]
        let expected = try WireJSON.decode(PackManifest.self, from: try depot.get("/v1/packs/world/2/manifest?from=1", auth).body)
        #expect(expected.delta?.summary != nil)
        let publisher = Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                    dataDirectory: depot.dataDirectory))
        #expect(try publisher.prune(keep: 1).map(\.name).contains("world/1"))
        depot.app.reloadCatalog()
        let pruned = try depot.get("/v1/packs/world/2/manifest?from=1", auth)
        #expect(pruned.status == 200 && pruned.text.contains("\"delta\": null") && !pruned.text.contains("\"reuse\""))
        return Setup(depot: depot, token: token, destination: destination, v1: v1, v2: v2, expected: expected)
    }

    @Test func anUpdateFromAPrunedVersionFetchesOnlyTheChangedChunks() async throws {
        let setup = try await Self.prunedSetup()
        defer { Task { await setup.depot.stop() } }
        let summary = setup.summary
        // The edits touch about 60 KB of 780 KB: most of version 2 is on the device already.
        #expect(summary.fetchBytes > 30_000 && summary.fetchBytes < setup.total / 4, "fetch \(summary.fetchBytes) of \(setup.total)")

        let before = try PackUpdateTests.packFileBytes(setup.depot)
        let updater = PackUpdateTests.downloader(setup.depot, into: setup.destination, token: setup.token)
        let log = Task { () -> [String] in
            var seen: [String] = []
            for await event in updater.events {
                if case .updating(let from, let reuse, let fetch) = event { seen.append("updating \(from) \(reuse) \(fetch)") }
                if case .chunkRejected(let path, let chunk) = event { seen.append("rejected \(path)#\(chunk)") }
            }
            return seen
        }
        guard case .completed(let updated) = try await updater.start() else { Issue.record("not completed"); return }
        #expect(updated.version == 2)
        // The same figures the server would have given, computed on the device.
        #expect(await log.value == ["updating 1 \(summary.reuseBytes) \(summary.fetchBytes)"])
        #expect(updated.delta?.summary == summary)
        let progress = await updater.progress
        #expect(progress.reusedBytes == summary.reuseBytes)
        #expect(progress.fetchedBytes == summary.fetchBytes)
        #expect(try await PackUpdateTests.packFileBytes(setup.depot, reaching: before + summary.fetchBytes) - before == summary.fetchBytes)

        #expect(PackUpdateTests.tree(setup.destination) == setup.v2)
        #expect(!FileManager.default.fileExists(atPath: updater.updateDirectory.path))
        // The saved manifest switched with the directories: it is version 2's now.
        let store = PackFileStore(root: URL(fileURLWithPath: setup.destination), journalName: PackDownloadOptions.journalFileName)
        let saved = try #require(store.loadInstalledManifest())
        #expect(saved == InstalledManifest(updated))
        #expect(saved.describes(try #require(store.loadJournal())))
    }

    @Test func aByteFlippedInAnInstalledFileMakesThatChunkFetchedNotCopied() async throws {
        let setup = try await Self.prunedSetup()
        defer { Task { await setup.depot.stop() } }
        // One byte flipped in the installed music.bin, which version 2 keeps as it is.
        let flipped = 123_456
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: setup.destination + "/music.bin"))
        try handle.seek(toOffset: UInt64(flipped))
        try handle.write(contentsOf: [setup.v1["music.bin"]![flipped] ^ 0xFF])
        try handle.close()
        let music = try #require(setup.expected.file(path: "music.bin"))
        let hit = try #require(music.chunks.first { $0.offset <= Int64(flipped) && Int64(flipped) < $0.offset + $0.length })
        #expect(hit.reuse != nil)

        let before = try PackUpdateTests.packFileBytes(setup.depot)
        let updater = PackUpdateTests.downloader(setup.depot, into: setup.destination, token: setup.token)
        let rejected = PackUpdateTests.rejectedChunks(of: updater)
        _ = try await updater.start()
        #expect(await rejected.value == ["music.bin#\(music.chunks.firstIndex(of: hit)!)"])
        let fetched = setup.summary.fetchBytes + hit.length
        #expect(try await PackUpdateTests.packFileBytes(setup.depot, reaching: before + fetched) - before == fetched)
        let progress = await updater.progress
        #expect(progress.fetchedBytes == fetched && progress.reusedBytes == setup.summary.reuseBytes - hit.length)
        #expect(PackUpdateTests.tree(setup.destination) == setup.v2)
    }

    /// A saved manifest that is missing (an install by an older client), unreadable, or of another version or pack
    /// than the journal is not used: the update fetches every chunk, as before, and still ends with version 2.
    @Test(arguments: ["missing", "unreadable", "other version", "other pack"])
    func withoutAUsableSavedManifestEveryChunkIsFetched(_ damage: String) async throws {
        let setup = try await Self.prunedSetup()
        defer { Task { await setup.depot.stop() } }
        let path = setup.destination + "/" + Self.savedManifest
        let text = try String(contentsOfFile: path, encoding: .utf8)
        switch damage {
        case "missing": try FileManager.default.removeItem(atPath: path)
        case "unreadable": try Data(text.prefix(100).utf8).write(to: URL(fileURLWithPath: path))
        case "other version": try Data(text.replacingOccurrences(of: "\"version\":1", with: "\"version\":7").utf8).write(to: URL(fileURLWithPath: path))
        default: try Data(text.replacingOccurrences(of: "\"pack\":\"world\"", with: "\"pack\":\"other\"").utf8).write(to: URL(fileURLWithPath: path))
        }
        let damaged = try? String(contentsOfFile: path, encoding: .utf8)
        #expect(damage == "missing" ? damaged == nil : damaged != text)

        let before = try PackUpdateTests.packFileBytes(setup.depot)
        let updater = PackUpdateTests.downloader(setup.depot, into: setup.destination, token: setup.token)
        guard case .completed(let updated) = try await updater.start() else { Issue.record("not completed"); return }
        #expect(updated.delta == .unavailable)
        #expect(await updater.progress.reusedBytes == 0)
        #expect(try await PackUpdateTests.packFileBytes(setup.depot, reaching: before + setup.total) - before == setup.total)
        #expect(PackUpdateTests.tree(setup.destination) == setup.v2)
    }

    @Test func depotFetchFromAPrunedVersionPrintsWhatItReused() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        var level = ContentChunkerFixture.bytes(4 << 20, seed: 41)
        try PackUpdateTests.publish(depot, files: ["level.bin": level])
        let out = depot.tree.path + "/device/world"
        let arguments = ["fetch", "--server", depot.baseURL, "--token", try ClientLoopbackTests.token(depot, pack: "world"),
                         "--pack", "world", "--out", out]
        #expect(try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments).status == 0)
        level.replaceSubrange(2_000_000..<2_004_096, with: ContentChunkerFixture.bytes(4096, seed: 42))
        try PackUpdateTests.publish(depot, files: ["level.bin": level])
        let publisher = Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                    dataDirectory: depot.dataDirectory))
        #expect(try publisher.prune(keep: 1).map(\.name).contains("world/1"))
        depot.app.reloadCatalog()

        let before = try PackUpdateTests.packFileBytes(depot)
        let update = try await ProcessRunner.run(ProcessRunner.depotExecutable, arguments)
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stdout.contains("updating from version 1: 4.0 MiB to copy")
                || update.stdout.contains("updating from version 1: 3.9 MiB to copy"), "\(update.stdout)")
        let line = try #require(update.stdout.split(separator: "\n").first { $0.contains("reused") })
        #expect(line.contains("reused 4.0 MiB, fetched 0.0 MiB") || line.contains("reused 3.9 MiB, fetched 0.0 MiB"), "\(line)")
        // A chunk or two of about 8 KiB, not the 4 MiB file.
        let fetched = try await PackUpdateTests.packFileBytes(depot, reaching: before + 1) - before
        #expect(fetched > 0 && fetched < 100_000, "\(fetched) bytes fetched")
        #expect(PackUpdateTests.tree(out) == ["level.bin": level])
        let entries = Set(FileManager.default.subpaths(atPath: out) ?? [])
        #expect(entries == ["level.bin", PackDownloadOptions.journalFileName, Self.savedManifest], "\(entries.sorted())")
    }
}
