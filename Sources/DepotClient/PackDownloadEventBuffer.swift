import Foundation

/// The unread events behind ``PackDownloader/events``: at most `limit` of them, so a downloader whose events nobody
/// reads holds a bounded number however many chunks it fetches (an unbounded `AsyncStream` kept every event of every
/// run until the downloader went away).
///
/// When an event arrives and `limit` are unread, the oldest unread event that neither begins nor ends a run is
/// dropped (``PackDownloadEvent/progress(_:)``, whose newer ones carry the same figures brought up to date,
/// ``PackDownloadEvent/chunkRejected(path:chunk:)``, ``PackDownloadEvent/fileRestarted(path:)``,
/// ``PackDownloadEvent/tokenRenewed``); events that begin or end a run are dropped only when the unread events are
/// nothing else, oldest first. The newest event is always kept, so a reader however late sees how the latest run
/// ended. The order of what is kept is the order of emission. Readers waiting at once get the events in turn.
final class PackDownloadEventBuffer: @unchecked Sendable {
    private struct State {
        var unread: [PackDownloadEvent] = []
        var finished = false
        /// The reading task was cancelled: the stream has ended for good and keeps nothing.
        var cancelled = false
        /// Readers waiting for an event, first come first served.
        var waiters: [CheckedContinuation<PackDownloadEvent?, Never>] = []
    }

    private enum Delivery {
        case event(PackDownloadEvent)
        case end
        case wait
    }

    /// The most unread events kept.
    let limit: Int
    /// Guarded by `lock` (Foundation's: the client library imports nothing else).
    private var state = State()
    private let lock = NSLock()

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The unread events held now.
    var count: Int { withState { $0.unread.count } }

    /// Hands `event` to the reader waiting for one, or keeps it unread (dropping one if `limit` are unread already).
    /// Ignored once the stream has finished or its reader was cancelled.
    func append(_ event: PackDownloadEvent) {
        let waiter = withState { state -> CheckedContinuation<PackDownloadEvent?, Never>? in
            guard !state.finished, !state.cancelled else { return nil }
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            if state.unread.count >= limit { state.unread.remove(at: Self.dropIndex(in: state.unread)) }
            state.unread.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// No more events: the reader gets what is unread, then the end of the stream.
    func finish() {
        let waiters = withState { state -> [CheckedContinuation<PackDownloadEvent?, Never>] in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The oldest unread event, waiting for one when there is none; nil at the end of the stream, and from the moment
    /// the reading task is cancelled.
    func next() async -> PackDownloadEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PackDownloadEvent?, Never>) in
                let delivery = withState { state -> Delivery in
                    if state.cancelled { return .end }
                    if !state.unread.isEmpty { return .event(state.unread.removeFirst()) }
                    if state.finished { return .end }
                    state.waiters.append(continuation)
                    return .wait
                }
                switch delivery {
                case .event(let event): continuation.resume(returning: event)
                case .end: continuation.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            // As with any AsyncStream, a cancelled reader ends the stream (for every reader).
            let waiters = withState { state -> [CheckedContinuation<PackDownloadEvent?, Never>] in
                state.cancelled = true
                state.unread = []
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: nil) }
        }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.withLock { body(&state) }
    }

    /// The event to drop from a full buffer: the oldest that neither begins nor ends a run, else the oldest.
    private static func dropIndex(in unread: [PackDownloadEvent]) -> Int {
        unread.firstIndex { !$0.marksRun } ?? 0
    }
}

extension PackDownloadEvent {
    /// True for the events that begin or end a run (kept over the others when unread events are dropped).
    var marksRun: Bool {
        switch self {
        case .updating, .started, .paused, .insufficientSpace, .failed, .completed, .cancelled: true
        case .progress, .chunkRejected, .fileRestarted, .tokenRenewed: false
        }
    }
}
