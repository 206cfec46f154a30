import DepotTestSupport
import Foundation
import Platform
import Synchronization
import Testing

/// The watcher behind hot reload: inotify wakes it at once, polling is the fallback, `stop` ends it.
@Suite struct DirectoryWatcherTests {
    /// Counts the checks and lets a test wait for the next ones without sleeping in a loop of its own.
    final class Checks: Sendable {
        let count = Mutex<Int>(0)
        let signal = DispatchSemaphore(value: 0)

        func record() {
            count.withLock { $0 += 1 }
            signal.signal()
        }

        var value: Int { count.withLock { $0 } }

        /// Waits for `n` more checks, at most `seconds`.
        func wait(for n: Int, seconds: Double) -> Bool {
            for _ in 0..<n where signal.wait(timeout: .now() + seconds) == .timedOut { return false }
            return true
        }
    }

    @Test func aWriteWakesTheWatcherLongBeforeItsInterval() async throws {
        let directory = TemporaryDirectory("watcher-inotify")
        let checks = Checks()
        let path = directory.path
        let watcher = DirectoryWatcher(directories: { [path] }, interval: .seconds(600)) { checks.record() }
        watcher.start(threadName: "test-watcher")
        defer { watcher.stop() }
        try await OffPool.run {
            // Give the thread a moment to add its watch; the first write may come before it and be missed,
            // so write until one wakes it (the interval alone would take ten minutes).
            let started = Date()
            var woke = false
            var n = 0
            while !woke && Date().timeIntervalSince(started) < 10 {
                n += 1
                directory.write("file-\(n).txt", "x")
                woke = checks.wait(for: 1, seconds: 0.5)
            }
            #expect(woke, "a write in a watched directory wakes the check")
            #expect(Date().timeIntervalSince(started) < 10)
        }
    }

    @Test func directoriesAreAskedForAgainSoNewOnesAreWatched() async throws {
        let directory = TemporaryDirectory("watcher-new")
        let checks = Checks()
        let path = directory.path
        // The watched set is the directory and every subdirectory it holds now.
        let watcher = DirectoryWatcher(directories: {
            [path] + ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).map { path + "/" + $0 }
        }, interval: .seconds(600)) { checks.record() }
        watcher.start(threadName: "test-watcher-new")
        defer { watcher.stop() }
        try await OffPool.run {
            // Creating the subdirectory wakes the watcher (an entry in a watched directory) ...
            var woke = false
            let started = Date()
            while !woke && Date().timeIntervalSince(started) < 10 {
                try? FileManager.default.createDirectory(atPath: path + "/pack", withIntermediateDirectories: true)
                directory.write("marker-\(UUID().uuidString)", "x")
                woke = checks.wait(for: 1, seconds: 0.5)
            }
            #expect(woke)
            // ... and a write inside it, which the top directory's watch does not see, wakes it too.
            _ = checks.wait(for: 100, seconds: 0.2)
            var wokeInside = false
            var n = 0
            while !wokeInside && Date().timeIntervalSince(started) < 20 {
                n += 1
                directory.write("pack/file-\(n).bin", "y")
                wokeInside = checks.wait(for: 1, seconds: 0.5)
            }
            #expect(wokeInside, "a write in a directory that appeared after the start wakes the check")
        }
    }

    @Test func withoutNotificationsItPollsAtTheInterval() async throws {
        let directory = TemporaryDirectory("watcher-poll")
        let checks = Checks()
        let path = directory.path
        let watcher = DirectoryWatcher(directories: { [path] }, interval: .milliseconds(20), usesNotifications: false) {
            checks.record()
        }
        watcher.start(threadName: "test-watcher-poll")
        try await OffPool.run {
            #expect(checks.wait(for: 5, seconds: 10), "five checks without any change")
            watcher.stop()
            #expect(!watcher.isRunning)
            // At most the check in progress finishes after the stop; then none.
            Thread.sleep(forTimeInterval: 0.2)
            let afterStop = checks.value
            Thread.sleep(forTimeInterval: 0.3)
            #expect(checks.value == afterStop)
        }
    }
}
