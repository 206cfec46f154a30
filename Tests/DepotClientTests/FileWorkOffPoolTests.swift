import DepotClient
import DepotTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// A downloader's file work runs on a queue of its own (``FileWorkQueue``), never on Swift's cooperative threads
/// or inside its actor: a write that blocks (here: into a FIFO, whose open waits for a reader, standing in for a
/// stalled volume) holds neither the downloader's actor nor the pool every other task of the app needs.
@Suite struct FileWorkOffPoolTests {
    @Test func blockedWritesHoldNeitherTheActorsNorTheCooperativeThreads() async throws {
        // More downloaders than the pool has threads: with the writes on the pool, every one of them would be held.
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let fixtures = (0..<count).map { _ in PackFixture() }
        defer { for fixture in fixtures { fixture.close() } }
        let fifos = try fixtures.map { fixture in
            try FileManager.default.createDirectory(at: fixture.destination, withIntermediateDirectories: true)
            let fifo = fixture.destination.appendingPathComponent("stages.bin").path
            #expect(mkfifo(fifo, 0o600) == 0)
            return fifo
        }
        let downloaders = fixtures.map { $0.downloader() }

        // Judged and released on a thread of its own, started before the downloads: it needs no cooperative thread
        // to wait, time out or release. Once every downloader waits in its FIFO's open, do their actors answer and
        // does a new task run? Then every FIFO gets a reader, which lets the writes go on (and fail: a FIFO cannot
        // be written at an offset), and the pool is free again whatever happened.
        let verdict = Mutex<(waiters: Int, responsive: Bool, readers: [Int32])?>(nil)
        let judged = DispatchSemaphore(value: 0)
        Thread {
            // Generous bounds, which only a failure waits out: at the start of a full `swift test` hundreds of tests
            // crowd the same two threads, and the writers took up to 70 s to get to their FIFOs there.
            let waiters = Self.waitForFIFOWaiters(count, seconds: 300)
            let answered = DispatchSemaphore(value: 0)
            Task {
                for downloader in downloaders { _ = await downloader.state }
                answered.signal()
            }
            let responsive = answered.wait(timeout: .now() + 60) == .success
            // Kept open until every run has ended: a writer that opens later finds a reader at once.
            let readers = fifos.map { open($0, O_RDONLY | O_NONBLOCK) }
            verdict.withLock { $0 = (waiters, responsive, readers) }
            judged.signal()
        }.start()
        let runs = downloaders.map { downloader in Task { try await downloader.start() } }
        let (waiters, responsive, readers) = try await OffPool.run {
            judged.wait()
            return verdict.withLock { $0 } ?? (0, false, [])
        }
        defer { for reader in readers where reader >= 0 { close(reader) } }
        #expect(waiters >= count, "\(waiters) of \(count) writers reached the FIFO's open")
        #expect(responsive, "the downloaders' actors and the cooperative pool answered while the writes were blocked")
        for run in runs {
            let outcome = await run.result
            guard case .failure(let error) = outcome, case .fileSystem? = error as? DepotClientError else {
                Issue.record("expected a file-system error from writing into a FIFO at an offset, got \(outcome)")
                continue
            }
        }
    }

    /// Waits (polling, at most `seconds`) until `count` threads of this process sleep in the kernel's wait for a
    /// FIFO's other end (`wait_for_partner`, `/proc/self/task/*/wchan`); returns how many did when it stopped.
    static func waitForFIFOWaiters(_ count: Int, seconds: Double) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        var seen = 0
        while Date() < deadline {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            let waiting = tasks.filter {
                (try? String(contentsOfFile: "/proc/self/task/\($0)/wchan", encoding: .utf8)) == "wait_for_partner"
            }
            seen = waiting.count
            if seen >= count { return seen }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return seen
    }
}
