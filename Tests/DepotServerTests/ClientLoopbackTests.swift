import DepotClient
import DepotCore
import DepotServer
import DepotCrypto
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 6: the DepotClient library driven against a real Depot server on loopback.
@Suite("DepotClient against a real server")
struct ClientLoopbackTests {
    static let secret = "test-secret-test-secret-test-secret-0123"

    /// Publishes `files` as a new version of `pack` into the server's tree and reloads.
    @discardableResult
    static func publish(_ depot: TestDepot, pack: String, files: [String: [UInt8]], chunkSize: Int64 = 64 * 1024) throws -> PublishOutcome {
        let source = depot.tree.path + "/src-\(UUID().uuidString.prefix(6))"
        for (path, bytes) in files { depot.tree.write(String(source.dropFirst(depot.tree.path.count + 1)) + "/" + path, bytes) }
        let publisher = Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                    dataDirectory: depot.dataDirectory))
        let outcome = try publisher.publish(PublishRequest(pack: pack, productID: "com.example.depot.\(pack)", type: .nonConsumable,
                                                           title: pack, chunking: .fixed, chunkSize: chunkSize, sources: [source]))
        depot.app.reloadCatalog()
        return outcome
    }

    /// One chunk (64 KiB) per request, as these tests count progress chunk by chunk; runs are tested in `PackUpdateTests`.
    static let chunkByChunk = PackDownloadOptions(runBytes: 64 * 1024)

    static func token(_ depot: TestDepot, pack: String, ttl: Int = 600) throws -> String {
        try OperatorTokens.issue(pack: pack, ttl: ttl, account: nil, secret: secret, dataDirectory: depot.dataDirectory)
    }

    static func client(_ depot: TestDepot, cache: String? = nil) -> DepotClient {
        DepotClient(baseURL: URL(string: depot.baseURL)!, cacheDirectory: cache.map { URL(fileURLWithPath: $0) })
    }

    /// Every file of the destination matches the SHA-256 the server's live manifest gives.
    static func matchesManifest(_ destination: String, _ manifest: DownloadManifest) -> Bool {
        manifest.files.allSatisfy { file in
            guard let data = FileManager.default.contents(atPath: destination + "/" + file.path) else { return false }
            return Hex.encode(SHA256.hash([UInt8](data))) == file.sha256
        }
    }

    /// Runs a download, pausing it once `completedBytes` reaches `bytes`.
    static func downloadPausing(at bytes: Int64, _ downloader: PackDownloader) async throws -> PackDownloadOutcome {
        let watcher = Task {
            for await event in downloader.events {
                if case .progress(let progress) = event, progress.completedBytes >= bytes {
                    await downloader.pause()
                    return
                }
            }
        }
        defer { watcher.cancel() }
        return try await downloader.start()
    }

    @Test func aDownloadCutByAServerRestartResumesFromTheLastVerifiedChunk() async throws {
        let depot = try await TestDepot.start()
        try Self.publish(depot, pack: "world", files: ["a.bin": SecureRandom.bytes(1_500_000), "b/c.bin": SecureRandom.bytes(700_000)])
        let destination = depot.tree.path + "/device"
        let token = try Self.token(depot, pack: "world")
        let first = PackDownloader(client: Self.client(depot), pack: "world", token: token, destination: URL(fileURLWithPath: destination),
                                   options: Self.chunkByChunk)
        // Stop the server while the download runs: the run fails part-way.
        let stopper = Task {
            for await event in first.events {
                if case .progress(let progress) = event, progress.completedBytes >= 600_000 {
                    await depot.stop()
                    return
                }
            }
        }
        await #expect(throws: (any Error).self) { _ = try await first.start() }
        let done = await first.progress.completedBytes
        #expect(done >= 600_000 && done < 2_200_000)
        // The download fails as the stop closes its connection; the stop itself goes on (it writes the delivery
        // record, closes the ledger, then frees the data directory): let it end before a server takes the tree.
        if done >= 600_000 { await stopper.value } else { stopper.cancel() }

        // A new server process on the same tree (new port), a new downloader (a relaunched app).
        let restarted = try await TestDepot.start(tree: depot.tree) { $0.tokenSecret = Self.secret }
        defer { Task { await restarted.stop() } }
        let second = PackDownloader(client: Self.client(restarted), pack: "world", token: token, destination: URL(fileURLWithPath: destination),
                                   options: Self.chunkByChunk)
        let resumedFrom = Task { () -> Int64 in
            for await event in second.events { if case .started(_, let resumed) = event { return resumed } }
            return -1
        }
        guard case .completed(let manifest) = try await second.start() else { Issue.record("not completed"); return }
        #expect(await resumedFrom.value >= 600_000 - 64 * 1024, "resumed from the verified chunks")
        #expect(Self.matchesManifest(destination, manifest))
    }

    @Test func aChunkCorruptedOnDiskIsFetchedAgain() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        try Self.publish(depot, pack: "world", files: ["a.bin": SecureRandom.bytes(400_000)])
        let destination = depot.tree.path + "/device"
        let token = try Self.token(depot, pack: "world")
        let first = PackDownloader(client: Self.client(depot), pack: "world", token: token, destination: URL(fileURLWithPath: destination),
                                   options: Self.chunkByChunk)
        guard case .completed = try await first.start() else { Issue.record("not completed"); return }
        // Flip one byte in the second chunk.
        let handle = try #require(FileHandle(forUpdatingAtPath: destination + "/a.bin"))
        try handle.seek(toOffset: 100_000)
        let byte = try handle.read(upToCount: 1)![0]
        try handle.seek(toOffset: 100_000)
        try handle.write(contentsOf: Data([byte ^ 0xFF]))
        try handle.close()
        let second = PackDownloader(client: Self.client(depot), pack: "world", token: token, destination: URL(fileURLWithPath: destination),
                                   options: Self.chunkByChunk)
        let rejected = Task { () -> [Int] in
            var chunks: [Int] = []
            for await event in second.events {
                if case .chunkRejected(_, let chunk) = event { chunks.append(chunk) }
                if case .completed = event { break }
            }
            return chunks
        }
        guard case .completed(let manifest) = try await second.start() else { Issue.record("not completed"); return }
        #expect(await rejected.value == [1])
        #expect(Self.matchesManifest(destination, manifest))
    }

    @Test func aFileReplacedByANewVersionMidDownloadRestartsWithoutSplicing() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let old = SecureRandom.bytes(600_000)
        try Self.publish(depot, pack: "world", files: ["a.bin": old])
        let destination = depot.tree.path + "/device"
        let token = try Self.token(depot, pack: "world")
        let first = PackDownloader(client: Self.client(depot), pack: "world", token: token, destination: URL(fileURLWithPath: destination),
                                   options: Self.chunkByChunk)
        guard case .paused = try await Self.downloadPausing(at: 200_000, first) else { Issue.record("did not pause"); return }
        // Version 2 replaces the file; version 1 is pruned.
        let new = SecureRandom.bytes(650_000)
        try Self.publish(depot, pack: "world", files: ["a.bin": new])
        _ = try Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                            dataDirectory: "")).prune(keep: 1)
        depot.app.reloadCatalog()
        let second = PackDownloader(client: Self.client(depot), pack: "world", token: token, destination: URL(fileURLWithPath: destination),
                                   options: Self.chunkByChunk)
        let restarted = Task { () -> Bool in
            for await event in second.events {
                if case .fileRestarted = event { return true }
                if case .completed = event { return false }
            }
            return false
        }
        guard case .completed(let manifest) = try await second.start() else { Issue.record("not completed"); return }
        #expect(manifest.version == 2)
        #expect(await restarted.value)
        let bytes = try #require(FileManager.default.contents(atPath: destination + "/a.bin"))
        #expect([UInt8](bytes) == new)
    }

    @Test func anExpiredTokenIsRenewedAndTheDownloadContinues() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        try Self.publish(depot, pack: "world", files: ["a.bin": SecureRandom.bytes(300_000)])
        let destination = depot.tree.path + "/device"
        let short = try Self.token(depot, pack: "world", ttl: 1)
        let renewals = Atomic<Int>(0)
        let fresh = try Self.token(depot, pack: "world")
        let downloader = PackDownloader(client: Self.client(depot), pack: "world", token: short, destination: URL(fileURLWithPath: destination),
                                        options: PackDownloadOptions(parallelChunks: 1, runBytes: 64 * 1024), renewToken: { renewals.add(1, ordering: .relaxed); return fresh })
        guard case .paused = try await Self.downloadPausing(at: 64 * 1024, downloader) else { Issue.record("did not pause"); return }
        try await Task.sleep(for: .milliseconds(2100))
        guard case .completed(let manifest) = try await downloader.start() else { Issue.record("not completed"); return }
        #expect(renewals.load(ordering: .relaxed) == 1)
        #expect(Self.matchesManifest(destination, manifest))
    }

    @Test func tooLittleSpaceStopsBeforeWritingThenContinues() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        try Self.publish(depot, pack: "world", files: ["a.bin": SecureRandom.bytes(300_000)])
        let destination = depot.tree.path + "/device"
        let free = Atomic<Int64>(1_000_000)
        let options = PackDownloadOptions(freeSpace: FreeSpaceReader { _ in free.load(ordering: .relaxed) }, runBytes: 64 * 1024)
        let downloader = PackDownloader(client: Self.client(depot), pack: "world", token: try Self.token(depot, pack: "world"),
                                        destination: URL(fileURLWithPath: destination), options: options)
        do {
            _ = try await downloader.start()
            Issue.record("expected insufficientSpace")
        } catch DepotClientError.insufficientSpace(let required, let available) {
            #expect(available == 1_000_000)
            #expect(required > available)
        }
        let written = (try? FileManager.default.contentsOfDirectory(atPath: destination))?.filter { !$0.hasPrefix(".") } ?? []
        #expect(written.isEmpty, "nothing written: \(written)")
        free.store(1 << 40, ordering: .relaxed)
        guard case .completed(let manifest) = try await downloader.start() else { Issue.record("not completed"); return }
        #expect(Self.matchesManifest(destination, manifest))
    }

    @Test func cancelRemovesPartialFiles() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        try Self.publish(depot, pack: "world", files: ["a.bin": SecureRandom.bytes(400_000), "b.bin": SecureRandom.bytes(10)])
        let destination = depot.tree.path + "/device"
        let downloader = PackDownloader(client: Self.client(depot), pack: "world", token: try Self.token(depot, pack: "world"),
                                        destination: URL(fileURLWithPath: destination), options: PackDownloadOptions(parallelChunks: 1, runBytes: 64 * 1024))
        guard case .paused = try await Self.downloadPausing(at: 64 * 1024, downloader) else { Issue.record("did not pause"); return }
        #expect(FileManager.default.fileExists(atPath: destination + "/a.bin"))
        await downloader.cancel()
        let left = (try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    @Test func theCachedProductListServesOffline() async throws {
        let depot = try await TestDepot.start()
        let cache = depot.tree.path + "/cache"
        let client = Self.client(depot, cache: cache)
        let online = try await client.productIDs()
        #expect(online.source == .network)
        #expect(online.list.contains("com.example.depot.level2"))
        let revalidated = try await client.productIDs()
        #expect(revalidated.source == .notModified)
        #expect(revalidated.list == online.list)
        await depot.stop()
        let offline = try await client.productIDs()
        #expect(offline.source == .offline)
        #expect(offline.list == online.list)
    }

    /// The client library (`DepotClient` and the `DepotWire` it shares with the server) builds with Foundation
    /// only, so it ships to iOS.
    @Test(arguments: [("DepotClient", ["Foundation", "FoundationNetworking", "CryptoKit", "DepotWire"]),
                      ("DepotWire", ["Foundation"])])
    func theClientLibraryImportsOnlyFoundation(_ target: String, allowed: [String]) throws {
        let directory = TestDepot.repositoryRoot + "/Sources/" + target
        var seen = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".swift") {
            let text = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                // `import X`, `public import X`, `@testable import X`, `@_exported public import X`, ...
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                      words[..<index].allSatisfy({ $0.hasPrefix("@") || ["public", "internal", "package"].contains($0) }) else { continue }
                seen += 1
                #expect(allowed.contains(String(words[index + 1])), "\(name) imports \(words[index + 1])")
            }
        }
        #expect(seen > 0)
    }
}
