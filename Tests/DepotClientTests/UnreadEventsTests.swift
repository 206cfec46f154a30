import Foundation
import Synchronization
import Testing
import DepotClient

/// `PackDownloader.events` is bounded: an app that never reads it holds at most `unreadEventLimit` events, however
/// many chunks it fetches, and a reader that comes late still sees how each run began and ended.
@Suite struct UnreadEventsTests {
    /// One 200,000-byte file: 200 chunks of 1,000 bytes, one request and one progress event each.
    static let files: [(String, Data)] = [("big.bin", sampleBytes(200_000, seed: 9))]
    static let limit = 16

    static func downloader(_ fixture: PackFixture) -> PackDownloader {
        var options = fixture.options()
        options.unreadEventLimit = limit
        return PackDownloader(client: fixture.client, pack: "level2", token: "t1", destination: fixture.destination, options: options)
    }

    /// Every event left in `downloader.events` (the stream has ended).
    static func drain(_ downloader: PackDownloader) async -> [PackDownloadEvent] {
        var events: [PackDownloadEvent] = []
        for await event in downloader.events { events.append(event) }
        return events
    }

    @Test func nobodyReadingHoldsAtMostTheLimitAndALateReaderSeesTheEnd() async throws {
        let fixture = PackFixture(files: Self.files)
        defer { fixture.close() }
        let downloader = Self.downloader(fixture)
        let held = CountSamples()
        fixture.server.update { state in
            state.chunkHook = { ordinal, _ in
                if ordinal % 25 == 0 { held.append(downloader.unreadEventCount) }
                return nil
            }
        }
        #expect(try await downloader.start().manifest != nil)
        fixture.expectInstalled(Self.files)
        #expect(PackDownloadOptions().unreadEventLimit == 256)
        // Sampled along the run (8 times, the first after 25 events): never above the limit.
        let samples = held.values
        #expect(samples.count == 8)
        #expect(samples.allSatisfy { $0 <= Self.limit }, "\(samples)")
        #expect(samples.last == Self.limit, "\(samples)")
        #expect(downloader.unreadEventCount == Self.limit)

        // 202 events were emitted; the late reader gets the run's start, the newest progress and the end.
        let events = await Self.drain(downloader)
        #expect(events.count == Self.limit)
        guard case .started(_, resumedBytes: 0) = events.first, case .completed(let manifest) = events.last else {
            Issue.record("\(events)")
            return
        }
        #expect(manifest.downloadBytes == 200_000)
        let completed = events.progressEvents.map(\.completedBytes)
        #expect(completed == (187...200).map { Int64($0) * 1000 })
        #expect(downloader.unreadEventCount == 0)
    }

    @Test func theEndOfAnEarlierRunOutlastsTheNextRunsProgress() async throws {
        let fixture = PackFixture(files: Self.files)
        defer { fixture.close() }
        let downloader = Self.downloader(fixture)
        fixture.server.update { state in
            state.chunkHook = { ordinal, _ in
                if ordinal == 100 { await downloader.pause() }
                return nil
            }
        }
        #expect(try await downloader.start().isPaused)
        fixture.server.update { $0.chunkHook = nil }
        #expect(try await downloader.start().manifest != nil)
        fixture.expectInstalled(Self.files)

        // The first run's 100 progress events and most of the second's are gone; both runs' starts and ends are there.
        let events = await Self.drain(downloader)
        #expect(events.count == Self.limit)
        let marks = events.compactMap { event -> String? in
            switch event {
            case .started(_, let resumed): "started \(resumed)"
            case .paused: "paused"
            case .completed: "completed"
            case .progress: nil
            default: "\(event)"
            }
        }
        #expect(marks == ["started 0", "paused", "started 100000", "completed"])
        #expect(events.progressEvents.map(\.completedBytes) == (189...200).map { Int64($0) * 1000 })
    }

    @Test func aReaderWhileItRunsGetsTheEventsInOrder() async throws {
        let fixture = PackFixture(files: Self.files)
        defer { fixture.close() }
        let downloader = Self.downloader(fixture)
        let reader = Task { await Self.drain(downloader) }
        #expect(try await downloader.start().manifest != nil)
        // The reader may fall more than the limit behind on a loaded machine: then it misses progress events only.
        let events = await reader.value
        guard case .started = events.first, case .completed = events.last else { Issue.record("\(events)"); return }
        let progress = events.progressEvents.map(\.completedBytes)
        #expect(progress.last == 200_000)
        #expect(progress == progress.sorted() && Set(progress).count == progress.count)
        #expect(events.count == progress.count + 2)
    }

    @Test func cancellingTheReadingTaskEndsItsLoop() async throws {
        let fixture = PackFixture(files: Self.files)
        defer { fixture.close() }
        let downloader = Self.downloader(fixture)
        // Nothing is emitted before start(): the reader waits (most likely already) until its task is cancelled.
        let reader = Task { await Self.drain(downloader) }
        try await Task.sleep(for: .milliseconds(100))
        reader.cancel()
        #expect(await reader.value.isEmpty)
        // The ended stream keeps nothing of the download that follows.
        #expect(try await downloader.start().manifest != nil)
        #expect(downloader.unreadEventCount == 0)
    }
}

/// Figures a chunk hook samples during a run.
private final class CountSamples: Sendable {
    private let samples = Mutex<[Int]>([])
    func append(_ value: Int) { samples.withLock { $0.append(value) } }
    var values: [Int] { samples.withLock { $0 } }
}
