import Foundation
import Synchronization
import DepotClient

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let state = Mutex<(now: Date, uptime: TimeInterval)>((Date(timeIntervalSince1970: 1_800_000_000), 100))

    var clock: DepotClock {
        DepotClock(now: { self.state.withLock { $0.now } }, uptime: { self.state.withLock { $0.uptime } })
    }

    func advance(_ seconds: TimeInterval) {
        state.withLock { $0.now += seconds; $0.uptime += seconds }
    }

    var now: Date { state.withLock { $0.now } }
}

/// Free space the test sets.
final class ManualFreeSpace: FreeSpaceSource {
    private let bytes: Mutex<Int64>
    init(_ bytes: Int64) { self.bytes = Mutex(bytes) }
    func set(_ value: Int64) { bytes.withLock { $0 = value } }
    func availableBytes(for url: URL) throws -> Int64 { bytes.withLock { $0 } }
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct ScratchDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("depot-client-tests")
            .appendingPathComponent(UUID().uuidString)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Deterministic bytes: `count` bytes seeded by `seed`.
func sampleBytes(_ count: Int, seed: UInt8) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7 &+ ($0 >> 8)) })
}

/// Gathers the events of a downloader in the background.
final class EventLog: Sendable {
    private let box: EventBox
    private let task: Task<Void, Never>

    init(_ downloader: PackDownloader) {
        let stream = downloader.events
        let box = EventBox()
        self.box = box
        task = Task { for await event in stream { box.append(event) } }
    }

    /// Every event, once the stream ended (after completed or cancelled).
    func finished() async -> [PackDownloadEvent] {
        await task.value
        return snapshot
    }

    /// The events so far.
    var snapshot: [PackDownloadEvent] { box.all }

    /// Whether an event matching `matches` arrives within `seconds` (events reach the log through a task of
    /// its own, which may run a while after the downloader emitted them on a loaded machine).
    func waitFor(within seconds: Double = 30, _ matches: @escaping (PackDownloadEvent) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !box.all.contains(where: matches) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}

final class EventBox: Sendable {
    private let events = Mutex<[PackDownloadEvent]>([])
    func append(_ event: PackDownloadEvent) { events.withLock { $0.append(event) } }
    var all: [PackDownloadEvent] { events.withLock { $0 } }
}

/// Runs `body` and returns the ``DepotClientError`` it threw (nil when it did not throw one).
func depotError(_ body: () async throws -> Void) async -> DepotClientError? {
    do {
        try await body()
        return nil
    } catch let error as DepotClientError {
        return error
    } catch {
        return nil
    }
}
