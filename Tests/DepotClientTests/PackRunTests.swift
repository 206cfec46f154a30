import Foundation
import Testing
import DepotClient

/// `pack-updates.md` §1: adjacent missing chunks of a file go out as one range request (up to `runBytes`), and every
/// chunk of the run is still verified on its own.
@Suite struct PackRunTests {
    @Test func adjacentChunksAreFetchedWithOneRangeRequestPerRun() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        _ = try await fixture.downloader(runBytes: 2000).start()
        fixture.expectInstalled()
        let ranges = fixture.server.chunkRequests.map { "\($0.url.lastPathComponent) \($0.header("Range") ?? "")" }
        #expect(ranges == ["stages.bin bytes=0-1999", "stages.bin bytes=2000-2499", "theme.ogg bytes=0-999",
                           "level 1.map bytes=0-1999", "level 1.map bytes=2000-3000"])
        #expect(fixture.server.chunkRequests.allSatisfy { $0.header("If-Range") != nil })
    }

    @Test func progressComesOncePerRunNotPerChunk() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader(runBytes: 2000)
        let log = EventLog(downloader)
        _ = try await downloader.start()
        fixture.expectInstalled()
        // The five runs of the eight chunks (as above): one progress event each, as its run is written.
        let progress = await log.finished().progressEvents
        #expect(progress.map(\.completedBytes) == [2000, 2500, 3500, 5500, 6501])
        #expect(progress.map(\.currentPath) == ["stages.bin", "stages.bin", "audio/theme.ogg", "maps/deep/level 1.map", "maps/deep/level 1.map"])
        #expect(progress.map(\.fetchedBytes) == [2000, 2500, 3500, 5500, 6501])
    }

    @Test func aBadChunkInARunIsFetchedAgainAlone() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.corruptChunks = 1 }
        let downloader = fixture.downloader(runBytes: 1 << 20)
        let log = EventLog(downloader)
        _ = try await downloader.start()
        #expect(await log.finished().rejectedChunks == ["stages.bin#0"])
        fixture.expectInstalled()
        let stages = fixture.server.chunkRequests.filter { $0.url.lastPathComponent == "stages.bin" }.map { $0.header("Range") }
        #expect(stages == ["bytes=0-2499", "bytes=0-999"])
    }

    @Test func verifiedChunksSplitRuns() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        // A first run stopped after two chunks: the rest is fetched in runs around what is verified.
        fixture.server.update { $0.chunkHook = { ordinal, _ in ordinal == 3 ? .failure(.networkConnectionLost) : nil } }
        _ = try? await fixture.downloader().start()
        fixture.server.update { $0.chunkHook = nil }
        let before = fixture.server.chunkRequests.count
        _ = try await fixture.downloader(runBytes: 1 << 20).start()
        fixture.expectInstalled()
        let ranges = fixture.server.chunkRequests.dropFirst(before).map { "\($0.url.lastPathComponent) \($0.header("Range") ?? "")" }
        #expect(ranges == ["stages.bin bytes=2000-2499", "theme.ogg bytes=0-999", "level 1.map bytes=0-3000"])
    }
}
