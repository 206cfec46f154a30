import DepotClient
import DepotCore
import DepotServer
import DepotCrypto
import DepotTestSupport
import Foundation
import Testing

/// `pack-updates.md` §1–§2 end to end: content-chunked versions, `?from=` deltas, and `DepotClient` updating an
/// installed version by copying what it has and fetching only the rest (bytes counted on the server).
@Suite("pack updates")
struct PackUpdateTests {
    static let average: Int64 = 8192

    /// Publishes `files` as the next version of `pack`, content-chunked around `average`.
    @discardableResult
    static func publish(_ depot: TestDepot, pack: String = "world", files: [String: [UInt8]], chunking: ChunkingMethod = .content,
                        stage: Bool = false) throws -> PublishOutcome {
        let source = "src-\(UUID().uuidString.prefix(8))"
        for (path, bytes) in files { depot.tree.write(source + "/" + path, bytes) }
        let publisher = Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                    dataDirectory: depot.dataDirectory))
        let outcome = try publisher.publish(PublishRequest(pack: pack, productID: "com.example.depot.\(pack)", type: .nonConsumable,
                                                           title: pack, chunking: chunking, chunkSize: chunking == .content ? average : 8192,
                                                           stage: stage, sources: [depot.tree.path + "/" + source]))
        depot.app.reloadCatalog()
        return outcome
    }

    /// Body bytes the server has sent for pack files (`depot_http_response_bytes_total{route="pack_file"}`).
    static func packFileBytes(_ depot: TestDepot) throws -> Int64 {
        let text = try depot.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("depot_http_response_bytes_total{route=\"pack_file\"}") }
        return line.flatMap { Int64($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Waits (up to 5 s) until the pack-file byte counter reaches `expected` (it is counted as a response ends).
    static func packFileBytes(_ depot: TestDepot, reaching expected: Int64) async throws -> Int64 {
        var seen = try packFileBytes(depot)
        for _ in 0..<50 where seen < expected {
            try await Task.sleep(for: .milliseconds(100))
            seen = try packFileBytes(depot)
        }
        return seen
    }

    /// Every regular file under `root` with its bytes, but the journal, the installed version's manifest beside it
    /// and their temporaries.
    static func tree(_ root: String) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for relative in (FileManager.default.subpaths(atPath: root) ?? []) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue,
                  relative != PackDownloadOptions.journalFileName,
                  !relative.hasPrefix(PackDownloadOptions.journalFileName + ".") else { continue }
            out[relative] = [UInt8](FileManager.default.contents(atPath: root + "/" + relative) ?? Data())
        }
        return out
    }

    /// Version 1 and version 2 of a pack: edits, an insertion and a deletion in one file, a file unchanged, one
    /// removed, one renamed, one added.
    static func versions() -> (v1: [String: [UInt8]], v2: [String: [UInt8]]) {
        let level = ContentChunkerFixture.bytes(400_000, seed: 11)
        let v1: [String: [UInt8]] = [
            "level.bin": level, "music.bin": ContentChunkerFixture.bytes(200_000, seed: 12),
            "old.bin": ContentChunkerFixture.bytes(50_000, seed: 13), "art/a.png": ContentChunkerFixture.bytes(100_000, seed: 14),
        ]
        var edited = level
        for at in [50_000, 150_000, 300_000] { edited.replaceSubrange(at..<at + 4096, with: ContentChunkerFixture.bytes(4096, seed: UInt64(at))) }
        edited.removeSubrange(350_000..<360_000)
        edited.insert(contentsOf: ContentChunkerFixture.bytes(20_000, seed: 15), at: 200_000)
        var v2 = v1
        v2["level.bin"] = edited
        v2["old.bin"] = nil
        v2["art/a.png"] = nil
        v2["art/b.png"] = v1["art/a.png"]
        v2["new.bin"] = ContentChunkerFixture.bytes(30_000, seed: 16)
        return (v1, v2)
    }

    /// The chunks `updater` rejects as copies (`path#index`), gathered from its events until they end.
    static func rejectedChunks(of updater: PackDownloader) -> Task<[String], Never> {
        Task {
            var seen: [String] = []
            for await event in updater.events { if case .chunkRejected(let path, let chunk) = event { seen.append("\(path)#\(chunk)") } }
            return seen
        }
    }

    static func downloader(_ depot: TestDepot, into destination: String, token: String) -> PackDownloader {
        PackDownloader(client: ClientLoopbackTests.client(depot), pack: "world", token: token,
                       destination: URL(fileURLWithPath: destination))
    }

    @Test func anUpdateFetchesOnlyTheChangedChunksAndEndsLikeAFreshDownload() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let (v1, v2) = Self.versions()
        try Self.publish(depot, files: v1)
        let token = try ClientLoopbackTests.token(depot, pack: "world")
        let destination = depot.tree.path + "/device/world"
        _ = try await Self.downloader(depot, into: destination, token: token).start()
        #expect(Self.tree(destination) == v1)

        try Self.publish(depot, files: v2)
        let delta = try #require(try depot.get("/v1/packs/world/2/manifest?from=1", ["Authorization": "Bearer \(token)"]).json)
        let figures = try #require(delta["delta"] as? [String: Any])
        let fetchBytes = try #require((figures["fetchBytes"] as? NSNumber)?.int64Value)
        let reuseBytes = try #require((figures["reuseBytes"] as? NSNumber)?.int64Value)
        let total = Int64(v2.values.reduce(0) { $0 + $1.count })
        #expect(fetchBytes + reuseBytes == total)
        // The edits touch about 60 KB of 780 KB: with 8 KiB chunks only their neighbourhoods are fetched.
        #expect(fetchBytes > 30_000 && fetchBytes < total / 4, "fetch \(fetchBytes) of \(total)")

        let before = try Self.packFileBytes(depot)
        let updater = Self.downloader(depot, into: destination, token: token)
        let log = Task { () -> [String] in
            var seen: [String] = []
            var paused = false
            for await event in updater.events {
                if case .updating(let from, let reuse, let fetch) = event { seen.append("updating \(from) \(reuse) \(fetch)") }
                if case .progress(let progress) = event, !paused, progress.completedBytes >= 200_000 {
                    paused = true
                    await updater.pause()
                }
            }
            return seen
        }
        // Paused part-way: the installed version is still whole and usable, the new one grows beside it.
        guard case .paused = try await updater.start() else { Issue.record("not paused"); return }
        let firstRun = await updater.progress
        #expect(Self.tree(destination) == v1)
        #expect(FileManager.default.fileExists(atPath: updater.updateDirectory.path))
        guard case .completed(let updated) = try await updater.start() else { Issue.record("not completed"); return }
        #expect(updated.version == 2)
        #expect(await log.value == ["updating 1 \(reuseBytes) \(fetchBytes)", "updating 1 \(reuseBytes) \(fetchBytes)"])
        let progress = await updater.progress
        #expect(firstRun.reusedBytes + progress.reusedBytes == reuseBytes)
        #expect(firstRun.fetchedBytes + progress.fetchedBytes == fetchBytes)
        #expect(try await Self.packFileBytes(depot, reaching: before + fetchBytes) - before == fetchBytes)

        #expect(Self.tree(destination) == v2)
        #expect(!FileManager.default.fileExists(atPath: updater.updateDirectory.path))
        let fresh = depot.tree.path + "/fresh/world"
        _ = try await Self.downloader(depot, into: fresh, token: token).start()
        #expect(Self.tree(fresh) == Self.tree(destination))

        // Updated again with nothing new: nothing is fetched.
        let settled = try Self.packFileBytes(depot)
        _ = try await Self.downloader(depot, into: destination, token: token).start()
        #expect(try Self.packFileBytes(depot) == settled)
    }

    @Test func aCorruptedLocalChunkIsFetchedNotCopied() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let (v1, v2) = Self.versions()
        try Self.publish(depot, files: v1)
        let token = try ClientLoopbackTests.token(depot, pack: "world")
        let destination = depot.tree.path + "/device/world"
        _ = try await Self.downloader(depot, into: destination, token: token).start()
        try Self.publish(depot, files: v2)

        // One byte flipped in the installed music.bin, which version 2 keeps as it is.
        let flipped = 123_456
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: destination + "/music.bin"))
        try handle.seek(toOffset: UInt64(flipped))
        try handle.write(contentsOf: [v1["music.bin"]![flipped] ^ 0xFF])
        try handle.close()

        let manifest = try WireJSON.decode(PackManifest.self, from: try depot.get("/v1/packs/world/2/manifest?from=1",
                                                                                   ["Authorization": "Bearer \(token)"]).body)
        let music = try #require(manifest.file(path: "music.bin"))
        let hit = try #require(music.chunks.first { $0.offset <= Int64(flipped) && Int64(flipped) < $0.offset + $0.length })
        #expect(hit.reuse != nil)
        let fetchBytes = try #require(manifest.delta?.summary?.fetchBytes)

        let before = try Self.packFileBytes(depot)
        let updater = Self.downloader(depot, into: destination, token: token)
        let rejected = Self.rejectedChunks(of: updater)
        _ = try await updater.start()
        #expect(await rejected.value == ["music.bin#\(music.chunks.firstIndex(of: hit)!)"])
        #expect(try await Self.packFileBytes(depot, reaching: before + fetchBytes + hit.length) - before == fetchBytes + hit.length)
        #expect(Self.tree(destination) == v2)
    }

    @Test func fromIsStrictAndAPrunedOldVersionIsDeltaNull() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let (v1, v2) = Self.versions()
        try Self.publish(depot, files: v1)
        try Self.publish(depot, files: v2)
        let token = try ClientLoopbackTests.token(depot, pack: "world")
        let auth = ["Authorization": "Bearer \(token)"]
        for bad in ["", "0", "x", "1.5", "-1", "%2B1", "01"] {
            let response = try depot.get("/v1/packs/world/2/manifest?from=\(bad)", auth)
            #expect(response.status == 400, "from=\(bad)")
            #expect(response.text.contains("bad_request"))
        }
        // Token first: a bad `from` without a token is still 400 (a malformed request), an unknown version 404.
        #expect(try depot.get("/v1/packs/world/9/manifest?from=1", auth).status == 404)

        let itself = try #require(try depot.get("/v1/packs/world/2/manifest?from=2", auth).json)
        let same = try #require(itself["delta"] as? [String: Any])
        #expect((same["fetchBytes"] as? NSNumber)?.intValue == 0)
        let never = try depot.get("/v1/packs/world/2/manifest?from=7", auth)
        #expect(never.status == 200 && never.text.contains("\"delta\": null") && !never.text.contains("\"reuse\""))

        // The plan with `from` counts only the chunks to fetch.
        let planned = try #require(try depot.get("/v1/packs/world/2/manifest?from=1&available=100000000000", auth).json)
        let plan = try #require(planned["plan"] as? [String: Any])
        #expect((plan["remainingBytes"] as? NSNumber)?.int64Value == ((planned["delta"] as? [String: Any])?["fetchBytes"] as? NSNumber)?.int64Value)

        // Version 1 pruned: the same question is now answered with `"delta": null`, not from the cache.
        let publisher = Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                    dataDirectory: depot.dataDirectory))
        #expect(try publisher.prune(keep: 1).map(\.name).contains("world/1"))
        depot.app.reloadCatalog()
        let pruned = try depot.get("/v1/packs/world/2/manifest?from=1", auth)
        #expect(pruned.status == 200)
        #expect(pruned.text.contains("\"delta\": null"))
    }
}

extension RawResponse {
    /// The body as a JSON object.
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
}

/// Deterministic bytes for the update tests.
enum ContentChunkerFixture {
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x2545_F491_4F6C_DD1D
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            withUnsafeBytes(of: z.littleEndian) { out.append(contentsOf: $0) }
        }
        return Array(out.prefix(count))
    }
}
