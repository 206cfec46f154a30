import Foundation
import Testing
import DepotClient

/// Resuming in a new downloader (a new process), checking what is on disk, and files that change.
@Suite struct PackResumeTests {
    /// Chunk request `ordinal` fails as if the network dropped: the run stops after `ordinal - 1` chunks.
    static func dropConnection(at ordinal: Int) -> FakeDepot.ChunkHook {
        { current, _ in current == ordinal ? .failure(.networkConnectionLost) : nil }
    }

    @Test func aNewDownloaderResumesAndFetchesOnlyMissingChunks() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.chunkHook = Self.dropConnection(at: 4) }
        let first = fixture.downloader()
        let error = await depotError { _ = try await first.start() }
        guard case .transport = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(fixture.journal?.files["stages.bin"]?.verified == [0, 1, 2])
        #expect(await first.progress.completedBytes == 2500)

        fixture.server.update { $0.chunkHook = nil }
        let second = fixture.downloader()
        let log = EventLog(second)
        _ = try await second.start()
        let events = await log.finished()
        #expect(events.resumedBytes == 2500)
        #expect(events.rejectedChunks.isEmpty)
        // 4 requests by the first (the last one failed), 5 by the second: only the missing chunks.
        let requests = fixture.server.chunkRequests
        #expect(requests.count == 4 + 5)
        #expect(requests[4...].allSatisfy { !$0.url.path.hasSuffix("stages.bin") })
        fixture.expectInstalled()
    }

    @Test func aCorruptedChunkOnDiskIsCaughtOnResume() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.chunkHook = Self.dropConnection(at: 4) }
        _ = await depotError { _ = try await fixture.downloader().start() }

        // Flip a byte inside chunk 1 of stages.bin behind the journal's back.
        let url = fixture.destination.appendingPathComponent("stages.bin")
        var bytes = try Data(contentsOf: url)
        bytes[1500] ^= 0x01
        try bytes.write(to: url)

        fixture.server.update { $0.chunkHook = nil }
        let second = fixture.downloader()
        let log = EventLog(second)
        _ = try await second.start()
        let events = await log.finished()
        #expect(events.rejectedChunks == ["stages.bin#1"])
        #expect(events.resumedBytes == 1500)
        #expect(fixture.server.chunkRequests.count == 4 + 6)
        #expect(fixture.server.chunkRequests[4].header("Range") == "bytes=1000-1999")
        fixture.expectInstalled()
    }

    @Test func withoutRehashingATruncatedFileIsStillCaught() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.chunkHook = Self.dropConnection(at: 4) }
        _ = await depotError { _ = try await fixture.downloader().start() }
        let handle = try FileHandle(forWritingTo: fixture.destination.appendingPathComponent("stages.bin"))
        try handle.truncate(atOffset: 1500)
        try handle.close()

        fixture.server.update { $0.chunkHook = nil }
        let second = fixture.downloader(verifyOnResume: false)
        let log = EventLog(second)
        _ = try await second.start()
        #expect(await log.finished().rejectedChunks == ["stages.bin#1", "stages.bin#2"])
        fixture.expectInstalled()
    }

    @Test func aFileChangedUnderTheSameURLRestartsInsteadOfSplicing() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let replacement = sampleBytes(2600, seed: 77)
        fixture.server.update { [server = fixture.server] state in
            state.chunkHook = { ordinal, _ in
                if ordinal == 2 { server.replaceInPlace(version: 1, path: "stages.bin", with: replacement) }
                return nil
            }
        }
        let downloader = fixture.downloader()
        let log = EventLog(downloader)
        let manifest = try #require(try await downloader.start().manifest)
        let events = await log.finished()
        #expect(events.restartedPaths == ["stages.bin"])

        let stages = fixture.server.chunkRequests.filter { $0.url.path.hasSuffix("stages.bin") }
        // Chunk 0 (old), chunk 1 answered 200 (If-Range failed), then the new file from its first byte.
        #expect(stages.map { $0.header("Range") } == ["bytes=0-999", "bytes=1000-1999", "bytes=0-999", "bytes=1000-1999", "bytes=2000-2599"])
        #expect(stages[2...].allSatisfy { $0.header("If-Range") == FakeDepot.etag(replacement) })
        var files = PackFixture.files
        files[0].1 = replacement
        fixture.expectInstalled(files, manifest: manifest)
        #expect(events.progressEvents.last?.completedBytes == PackFixture.totalBytes + 100)
    }

    @Test func aNewVersionBetweenRunsKeepsUnchangedFilesAndRestartsChangedOnes() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.chunkHook = Self.dropConnection(at: 5) }
        _ = await depotError { _ = try await fixture.downloader().start() }
        #expect(fixture.journal?.files["audio/theme.ogg"]?.verified == [0])

        var v2 = PackFixture.files
        v2[1].1 = sampleBytes(1200, seed: 42)          // audio/theme.ogg changes
        v2.append(("extra.bin", sampleBytes(10, seed: 5)))
        fixture.server.publish(version: 2, files: v2)
        fixture.server.update { $0.chunkHook = nil }

        let second = fixture.downloader()
        let log = EventLog(second)
        let manifest = try #require(try await second.start().manifest)
        #expect(manifest.version == 2)
        let events = await log.finished()
        #expect(events.restartedPaths == ["audio/theme.ogg"])
        #expect(events.resumedBytes == 2500)
        let requests = fixture.server.chunkRequests[5...]
        #expect(requests.count == 2 + 4 + 1)
        #expect(requests.allSatisfy { $0.url.path.hasPrefix("/v1/packs/level2/2/files/") })
        #expect(!requests.contains { $0.url.path.hasSuffix("stages.bin") })
        fixture.expectInstalled(v2, manifest: manifest)
        #expect(fixture.journal?.version == 2)
    }

    @Test func aPrunedVersionMidRunMovesToTheLiveOne() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        var files = PackFixture.files
        files[3].1 = sampleBytes(2000, seed: 11)
        let v2 = files
        fixture.server.update { [server = fixture.server] state in
            state.chunkHook = { ordinal, _ in
                if ordinal == 3 {
                    server.publish(version: 2, files: v2)
                    server.update { $0.versions[1] = nil }
                }
                return nil
            }
        }
        let downloader = fixture.downloader()
        let log = EventLog(downloader)
        let manifest = try #require(try await downloader.start().manifest)
        #expect(manifest.version == 2)
        fixture.expectInstalled(v2, manifest: manifest)
        // stages.bin is the same in version 2: its two verified chunks stay, the third comes from v2's URL.
        #expect(await log.finished().restartedPaths.isEmpty)
        let stages = fixture.server.chunkRequests.filter { $0.url.path.hasSuffix("stages.bin") }
        #expect(stages.map(\.url.path).last == "/v1/packs/level2/2/files/stages.bin")
        #expect(stages.map { $0.header("Range") } == ["bytes=0-999", "bytes=1000-1999", "bytes=2000-2499", "bytes=2000-2499"])
    }
}
