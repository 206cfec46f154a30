import Foundation
import Testing
import DepotClient

/// A whole download against the fake server: requests on the wire, bytes on disk, events.
@Suite struct PackDownloadTests {
    @Test func fullDownloadWritesEveryFileVerified() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader()
        let log = EventLog(downloader)

        let manifest = try #require(try await downloader.start().manifest)
        #expect(manifest.version == 1)
        #expect(manifest.files.count == 4)
        fixture.expectInstalled(manifest: manifest)
        #expect(fixture.contents("empty.txt") == Data())
        #expect(await downloader.state == .completed)

        // The manifest: the 307 is followed, the token travels as a bearer token.
        let requests = fixture.server.requests
        #expect(requests[0].url.path == "/v1/packs/level2/manifest")
        #expect(requests[1].url.path == "/v1/packs/level2/1/manifest")
        #expect(requests[0...1].allSatisfy { $0.header("Authorization") == "Bearer t1" })

        // One request per chunk, exactly its bytes, conditional on the file's ETag.
        let chunks = fixture.server.chunkRequests
        #expect(chunks.count == PackFixture.chunkCount)
        let expected = manifest.files.flatMap { file in file.chunks.map { (file, $0) } }
        for (request, (file, chunk)) in zip(chunks, expected) {
            #expect(request.url.path == "/v1/packs/level2/1/files/" + file.path)
            #expect(request.header("Range") == "bytes=\(chunk.offset)-\(chunk.offset + chunk.length - 1)")
            #expect(request.header("If-Range") == file.etag)
            #expect(request.header("Authorization") == "Bearer t1")
            #expect(request.header("Accept-Encoding") == "identity")
        }

        let events = await log.finished()
        #expect(events.resumedBytes == 0)
        #expect(events.progressEvents.count == PackFixture.chunkCount)
        #expect(events.progressEvents.last?.completedBytes == PackFixture.totalBytes)
        #expect(events.progressEvents.last?.progress == 1)
        guard case .completed = events.last else { Issue.record("last event \(String(describing: events.last))"); return }

        let journal = try #require(fixture.journal)
        #expect(journal.completed)
        #expect(journal.version == 1)
        #expect(journal.files["stages.bin"]?.verified == [0, 1, 2])
    }

    @Test func progressReportsSmoothedRateAndTimeRemaining() async throws {
        let fixture = PackFixture(files: [("big.bin", sampleBytes(5000, seed: 9))])
        defer { fixture.close() }
        // Every chunk takes half a second: 2000 B/s.
        fixture.server.update { state in
            state.chunkHook = { [time = fixture.time] _, _ in time.advance(0.5); return nil }
        }
        let downloader = fixture.downloader()
        let log = EventLog(downloader)
        _ = try await downloader.start()
        let progress = await log.finished().progressEvents
        #expect(progress.map(\.completedBytes) == [1000, 2000, 3000, 4000, 5000])
        #expect(progress.map(\.totalBytes) == Array(repeating: 5000, count: 5))
        #expect(progress.map(\.progress) == [0.2, 0.4, 0.6, 0.8, 1.0])
        #expect(progress.allSatisfy { $0.bytesPerSecond == 2000 })
        #expect(progress.map(\.timeRemaining) == [2, 1.5, 1, 0.5, 0])
        #expect(progress.first?.currentPath == "big.bin")
    }

    @Test func aStaleLongerFileIsCutToSize() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        try FileManager.default.createDirectory(at: fixture.destination, withIntermediateDirectories: true)
        try Data(repeating: 0xEE, count: 9000).write(to: fixture.destination.appendingPathComponent("stages.bin"))
        _ = try await fixture.downloader().start()
        fixture.expectInstalled()
    }

    @Test func startingACompletedDownloadAgainFetchesNothing() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader()
        _ = try await downloader.start()
        let afterFirst = fixture.server.requests.count
        #expect(try await downloader.start().manifest != nil)
        #expect(fixture.server.requests.count == afterFirst)

        // A new process re-verifies what is on disk and fetches no chunk.
        let again = try await fixture.downloader().start()
        #expect(again.manifest != nil)
        #expect(fixture.server.chunkRequests.count == PackFixture.chunkCount)
        fixture.expectInstalled()
    }

    @Test func authorizationDroppedOnARedirectIsSentAgainToTheFinalURL() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.dropAuthorizationOnRedirect = true }
        _ = try await fixture.downloader().start()
        let manifestRequests = fixture.server.requests.filter { $0.url.path.hasSuffix("/manifest") }
        #expect(manifestRequests.map(\.url.path) == ["/v1/packs/level2/manifest", "/v1/packs/level2/1/manifest"])
        #expect(manifestRequests[1].header("Authorization") == "Bearer t1")
        fixture.expectInstalled()
    }

    @Test func corruptedBytesFromTheServerAreRejectedAndFetchedAgain() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.corruptChunks = 1 }
        let downloader = fixture.downloader()
        let log = EventLog(downloader)
        _ = try await downloader.start()
        #expect(await log.finished().rejectedChunks == ["stages.bin#0"])
        #expect(fixture.server.chunkRequests.count == PackFixture.chunkCount + 1)
        fixture.expectInstalled()
    }

    @Test func aChunkThatNeverVerifiesFailsWithoutWritingIt() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.corruptChunks = 100 }
        let downloader = fixture.downloader()
        let error = await depotError { _ = try await downloader.start() }
        guard case .chunkCorrupted("stages.bin", 0) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(fixture.server.chunkRequests.count == 3)
        #expect(!fixture.exists("stages.bin"))
        #expect(await downloader.state == .failed)
    }

    @Test(arguments: ["../evil.bin", "/etc/evil", "a\\b.bin", "maps/../../evil", "", "a//b", "./a", ".depot-download.json"])
    func unsafeManifestPathsAreRefusedBeforeWriting(path: String) async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let escaped = path.replacingOccurrences(of: "\\", with: "\\\\")
        let hash = String(repeating: "a", count: 64)
        fixture.server.update {
            $0.manifestOverride = """
                {"pack": "level2", "version": 1, "downloadBytes": 1, "chunkSize": 1000, "files": [
                 {"path": "\(escaped)", "size": 1, "sha256": "\(hash)", "etag": "\\"x\\"", "url": "/v1/packs/level2/1/files/x",
                  "chunks": [{"offset": 0, "length": 1, "sha256": "\(hash)"}]}]}
                """
        }
        let error = await depotError { _ = try await fixture.downloader().start() }
        guard case .unsafePath(let refused) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(refused == path)
        #expect(fixture.server.chunkRequests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
    }

    @Test func aManifestForAnotherPackIsRefused() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update {
            $0.manifestOverride = "{\"pack\": \"level9\", \"version\": 1, \"downloadBytes\": 0, \"chunkSize\": 1000, \"files\": []}"
        }
        let error = await depotError { _ = try await fixture.downloader().start() }
        guard case .invalidResponse = error else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test func serverUnavailableStopsTheRunAndALaterStartFinishes() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { state in
            state.chunkHook = { ordinal, _ in ordinal == 2 ? .error(503, "unavailable", headers: ["Retry-After": "5"]) : nil }
        }
        let downloader = fixture.downloader()
        let error = await depotError { _ = try await downloader.start() }
        guard case .retryLater(5) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(await downloader.state == .failed)
        guard case .retryLater = await downloader.lastError else { Issue.record("lastError"); return }
        _ = try await downloader.start()
        #expect(fixture.server.chunkRequests.count == PackFixture.chunkCount + 1)
        fixture.expectInstalled()
    }

    @Test func revokedPurchaseIsReported() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { state in
            state.chunkHook = { _, _ in .error(403, "revoked") }
        }
        let error = await depotError { _ = try await fixture.downloader().start() }
        guard case .revoked = error else { Issue.record("got \(String(describing: error))"); return }
    }
}
