import CLinux
import Foundation
import Glibc
import Synchronization

/// Wakes a check when files in a set of directories change: inotify wakes it as soon as an entry is
/// created, written, moved, deleted or changes attributes; without inotify (or for a change it does not
/// see, such as a file edited in place in a subdirectory that is not watched) the check also runs every
/// `interval`. What to compare is the caller's business: the check runs on the watcher's own thread and
/// usually compares cheap fingerprints before doing real work.
public final class DirectoryWatcher: Sendable {
    private let interval: Duration
    private let usesNotifications: Bool
    private let directories: @Sendable () -> [String]
    private let check: @Sendable () -> Void
    private let running = Atomic<Bool>(false)

    /// A burst of writes (an editor, a publish) gets this long to settle before the check runs.
    static let settleTime = 0.02

    /// - Parameters:
    ///   - directories: what to watch, asked again before every wait (new pack directories join).
    ///     Watching a directory again is free; one that does not exist is skipped.
    ///   - interval: the longest time between two checks.
    ///   - usesNotifications: `false` polls only (tests of the fallback).
    ///   - check: runs after every wake, on the watcher's thread.
    public init(directories: @escaping @Sendable () -> [String], interval: Duration, usesNotifications: Bool = true,
                check: @escaping @Sendable () -> Void) {
        self.directories = directories
        self.interval = interval
        self.usesNotifications = usesNotifications
        self.check = check
    }

    /// Starts the watcher's thread (once; later calls do nothing until ``stop()``).
    public func start(threadName: String, priority: ThreadPriority? = nil) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            if let priority { priority.applyToCurrentThread() }
            watch()
        }
        thread.name = threadName
        thread.start()
    }

    /// Stops after the current wait (at most `interval`); the check does not run again.
    public func stop() {
        running.store(false, ordering: .releasing)
    }

    /// Whether the watcher's thread is meant to be running.
    public var isRunning: Bool { running.load(ordering: .acquiring) }

    private func watch() {
        let notifications = usesNotifications ? clinux_inotify_open() : -1
        defer { if notifications >= 0 { close(notifications) } }
        let milliseconds = Int32(clamping: interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        while running.load(ordering: .acquiring) {
            if notifications >= 0 {
                for directory in directories() { _ = clinux_inotify_watch_directory(notifications, directory) }
                if clinux_inotify_wait(notifications, max(1, milliseconds)) > 0 {
                    Thread.sleep(forTimeInterval: Self.settleTime)
                    _ = clinux_inotify_wait(notifications, 0)
                }
            } else {
                Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
            }
            guard running.load(ordering: .acquiring) else { break }
            check()
        }
    }
}
