package import DepotWire
import Dispatch
import Foundation
import Synchronization

/// The console's traffic over the last day: once a minute the counters behind `/metrics` are copied into a
/// ring of 1,441 snapshots, so the difference of two neighbours is one minute's traffic (1,440 minutes, a day).
/// Nothing is counted twice: the request path keeps counting into ``Metrics`` only.
package final class TrafficHistory: Sendable {
    /// Complete minutes kept.
    static let minutesKept = 1440

    struct Snapshot: Sendable {
        /// Unix seconds of the minute boundary it was taken at (floored).
        let minute: Int64
        let totals: TrafficCounts
    }

    private let totals: @Sendable () -> TrafficCounts
    private let now: @Sendable () -> Int64
    private let snapshots = Mutex<[Snapshot]>([])
    private let queue = DispatchQueue(label: "depot.traffic")
    /// Touched only on `queue`.
    private nonisolated(unsafe) var timer: (any DispatchSourceTimer)?

    /// A history sampling `totals` (the counters since start) once a minute; `now` gives Unix seconds.
    package init(totals: @escaping @Sendable () -> TrafficCounts, now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.totals = totals
        self.now = now
        sample()
    }

    /// Takes a snapshot at each minute boundary until ``stop()``.
    func start() {
        queue.async { [self] in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: queue)
            let untilNextMinute = 60 - now() % 60
            source.schedule(deadline: .now() + .seconds(Int(untilNextMinute)), repeating: .seconds(60), leeway: .milliseconds(500))
            source.setEventHandler { [weak self] in self?.sample() }
            source.resume()
            timer = source
        }
    }

    func stop() {
        queue.async { [self] in
            timer?.cancel()
            timer = nil
        }
    }

    /// Records the counters now, as the snapshot of the current minute (a second sample in the same minute
    /// replaces the first, so a late timer never makes a minute twice).
    package func sample() {
        let snapshot = Snapshot(minute: now() / 60 * 60, totals: totals())
        snapshots.withLock { snapshots in
            if let last = snapshots.last, last.minute >= snapshot.minute {
                if snapshots.count > 1 { snapshots[snapshots.count - 1] = snapshot }
                return
            }
            snapshots.append(snapshot)
            if snapshots.count > Self.minutesKept + 1 { snapshots.removeFirst(snapshots.count - Self.minutesKept - 1) }
        }
    }

    /// The minutes kept (oldest first), the minute under way and the totals since start.
    package func report(disk: TrafficReport.Disk) -> TrafficReport {
        let kept = snapshots.withLock { $0 }
        let live = totals()
        var minutes: [TrafficReport.Bucket] = []
        minutes.reserveCapacity(kept.count)
        for (earlier, later) in zip(kept, kept.dropFirst()) {
            minutes.append(TrafficReport.Bucket(start: Timestamp.rfc3339(earlier.minute), counts: later.totals.subtracting(earlier.totals)))
        }
        let last = kept.last ?? Snapshot(minute: now() / 60 * 60, totals: TrafficCounts())
        let current = TrafficReport.Bucket(start: Timestamp.rfc3339(last.minute), counts: live.subtracting(last.totals))
        return TrafficReport(now: Timestamp.rfc3339(now()), totals: live, minutes: minutes, current: current, disk: disk)
    }
}
