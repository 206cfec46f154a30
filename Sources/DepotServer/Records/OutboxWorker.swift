import Server
package import Foundation
package import Ledger
import Synchronization

/// Works through one of the ledger's outbox queues in the background: claims the items that are due and
/// first in line for their ordering key, attempts each (up to `batch` at once, one item per key at a time),
/// and records the outcome: sent, retried later on `schedule` (the last attempt shortly before the item's
/// deadline, or later when the receiver asked for that), or abandoned once the deadline has passed. Each item
/// is its own task: a slow receiver holds only its own key, and a finished attempt frees its place for the
/// next item at once. Never on an event loop: the loop is a task that only awaits (ledger calls run on the
/// ledger's queues, attempts on URLSession).
///
/// Items survive restarts in the ledger; a worker that is killed leaves its claims, which the next process
/// (SQLite) or, after the lease, any instance (PostgreSQL) takes over. `stop()` waits for the attempts in
/// flight (at most the lease), so an accepted one is recorded as sent before the ledger closes.
package final class OutboxWorker: Sendable {
    /// The result of one attempt.
    package enum Attempt: Sendable, Equatable {
        /// Done: the receiver accepted it.
        case sent
        /// Done, and the string is kept with the item as its outcome (a consumption answer: the body sent); the
        /// entries (what announces it: `consumption.sent`) are queued in the transaction that marks it sent.
        case sentRecording(String, announcing: [OutboxEntry] = [])
        /// Try again later (why, for the ledger and the logs), not before `retryAfter` seconds when the receiver
        /// said so (`Retry-After`).
        case failed(String, retryAfter: Double? = nil)
        /// Give up now (a refusal that no retry can change).
        case refused(String)
    }

    /// Counters by outcome (`sent`, `failed`, `abandoned`) and the last known queue length.
    package struct Statistics: Sendable, Equatable {
        /// Attempts by outcome.
        package internal(set) var outcomes: [String: UInt64] = [:]
        var queueLength = 0

        /// `/metrics` lines: the counter `total` by outcome and the gauge `queue`, each with its help text.
        func metricsText(total: String, totalHelp: String, queue: String, queueHelp: String) -> String {
            var out = "# HELP \(total) \(totalHelp)\n# TYPE \(total) counter\n"
            for outcome in ["sent", "failed", "abandoned"] {
                out += "\(total){outcome=\"\(outcome)\"} \(outcomes[outcome] ?? 0)\n"
            }
            out += "# HELP \(queue) \(queueHelp)\n# TYPE \(queue) gauge\n\(queue) \(queueLength)\n"
            return out
        }
    }

    /// How long before an item's deadline its last attempt is made (when the schedule would pass the deadline).
    package static let finalAttemptLead: Double = 30
    /// The longest wait a receiver's `Retry-After` can ask for.
    static let longestRetryAfter: Double = 3600

    private struct State {
        var wake = false
        var stopped = false
        var task: Task<Void, Never>?
        /// The loop waiting in `idle()`, resumed by `wake()`, `stop()` or its timer.
        var sleeper: CheckedContinuation<Void, Never>?
        var inFlight = 0
        /// The items being attempted (a claim whose lease ran out during its attempt comes back: not twice).
        var attempting: Set<Int64> = []
    }

    let queue: OutboxQueue
    private let ledger: Ledger
    private let owner: String
    private let schedule: RetrySchedule
    private let lease: Double
    private let batch: Int
    private let poll: Duration
    private let now: @Sendable () -> Date
    private let attempt: @Sendable (OutboxItem) async -> Attempt
    private let finished: @Sendable (OutboxItem, Attempt) async -> Void
    private let logger: Logger
    private let state = Mutex(State())
    private let counters = Mutex(Statistics())

    /// A worker for `queue`; `attempt` sends one item, `finished` hears every final outcome (sent or
    /// abandoned) after the ledger recorded it.
    package init(queue: OutboxQueue, ledger: Ledger, owner: String, schedule: RetrySchedule, lease: Double, batch: Int = 16,
         poll: Duration = .seconds(1), logger: Logger, now: @escaping @Sendable () -> Date = { Date() },
         attempt: @escaping @Sendable (OutboxItem) async -> Attempt,
         finished: @escaping @Sendable (OutboxItem, Attempt) async -> Void = { _, _ in }) {
        self.queue = queue
        self.ledger = ledger
        self.owner = owner
        self.schedule = schedule
        self.lease = lease
        self.batch = max(1, batch)
        self.poll = poll
        self.logger = logger
        self.now = now
        self.attempt = attempt
        self.finished = finished
    }

    /// Starts the background loop (once).
    package func start() {
        state.withLock { state in
            guard state.task == nil, !state.stopped else { return }
            state.task = Task(executorPreference: WorkerPool.shared) { [self] in await run() }
        }
    }

    /// Asks the loop to look at the queue now (something was just queued, or an attempt ended).
    func wake() {
        state.withLock { state in
            state.wake = true
            return state.sleeper.take()
        }?.resume()
    }

    /// Stops claiming and waits for the attempts in flight and their outcomes in the ledger, at most the lease
    /// (after which another instance may take the items over anyway); call before the ledger closes.
    package func stop() async {
        let (task, sleeper) = state.withLock { state in
            state.stopped = true
            return (state.task, state.sleeper.take())
        }
        sleeper?.resume()
        guard let task else { return }
        let lease = lease
        // Whichever comes first: the loop's end or the lease (a structured group would wait for both).
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = Mutex<CheckedContinuation<Void, Never>?>(continuation)
            let finish: @Sendable () -> Void = { once.withLock { $0.take() }?.resume() }
            let timer = Task(executorPreference: WorkerPool.shared) {
                try? await Task.sleep(for: .milliseconds(Int(lease * 1000)))
                finish()
            }
            Task(executorPreference: WorkerPool.shared) {
                await task.value
                finish()
                timer.cancel()
            }
        }
    }

    /// The counters so far.
    package var statistics: Statistics { counters.withLock { $0 } }

    /// Attempts running now (tests).
    package var attemptsInFlight: Int { state.withLock { $0.inFlight } }

    // MARK: - The loop

    /// The log event of this queue's lines.
    private var event: LogEvent { queue == .webhook ? .webhook : .consumption }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() async {
        await withDiscardingTaskGroup { group in
            while !isStopped {
                let room = state.withLock { state -> Int in
                    state.wake = false
                    return batch - state.inFlight
                }
                var claimed: [OutboxItem] = []
                if room > 0 {
                    do {
                        claimed = try await ledger.claimOutbox(queue: queue, owner: owner, now: now(), lease: lease, limit: room)
                    } catch {
                        logger.warning(event, "\(queue.rawValue) queue: cannot read the ledger: \(error)")
                    }
                    claimed = state.withLock { state in
                        let fresh = claimed.filter { !state.attempting.contains($0.id) }
                        state.inFlight += fresh.count
                        state.attempting.formUnion(fresh.map(\.id))
                        return fresh
                    }
                    for item in claimed {
                        group.addTask {
                            await self.handle(item)
                            self.state.withLock {
                                $0.inFlight -= 1
                                $0.attempting.remove(item.id)
                            }
                            self.wake()
                        }
                    }
                    if let length = try? await ledger.pendingOutboxCount(queue: queue) {
                        counters.withLock { $0.queueLength = length }
                    }
                }
                // A full claim may have more behind it: look again at once (the next round waits if no room is left).
                if room > 0, claimed.count == room { continue }
                await idle()
            }
            // Leaving the group waits for the attempts in flight.
        }
    }

    /// Waits until `poll` passed, `wake()` was called, or the worker stops; no timer runs while nothing waits.
    private func idle() async {
        let timer = Task(executorPreference: WorkerPool.shared) { [self, poll] in
            try? await Task.sleep(for: poll)
            if !Task.isCancelled { wake() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.wake || state.stopped { return true }
                state.sleeper = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        timer.cancel()
    }

    private func handle(_ item: OutboxItem) async {
        let started = now()
        if started > item.entry.deadline {
            await abandon(item, attempts: item.attempts, error: item.lastError ?? "deadline passed before an attempt",
                          outcome: .refused("deadline passed"))
            return
        }
        let result = await attempt(item)
        let ended = now()
        do {
            switch result {
            case .sent, .sentRecording:
                var outcome: String?
                var announcing: [OutboxEntry] = []
                if case .sentRecording(let recorded, let entries) = result { (outcome, announcing) = (recorded, entries) }
                try await ledger.finishOutbox(id: item.id, state: .sent, now: ended, outcome: outcome, enqueue: announcing)
                count("sent")
                var done = item
                done.outcome = outcome
                await finished(done, result)
            case .refused(let reason):
                await abandon(item, attempts: item.attempts + 1, error: reason, outcome: result)
            case .failed(let reason, let retryAfter):
                count("failed")
                if let next = nextAttempt(after: item, ended: ended, retryAfter: retryAfter) {
                    try await ledger.retryOutbox(id: item.id, nextAttempt: next, error: reason)
                } else {
                    await abandon(item, attempts: item.attempts + 1, error: reason, outcome: result)
                }
            }
        } catch {
            logger.warning(event, "\(queue.rawValue) queue: cannot record the outcome of item \(item.id): \(error)")
        }
    }

    /// When to try `item` again after a failed attempt that ended at `ended`: after the schedule's delay (or the
    /// receiver's `Retry-After`, if longer); when that passes the deadline, once more shortly before it; nil
    /// when this was that last attempt (or the receiver asks to wait past the deadline).
    func nextAttempt(after item: OutboxItem, ended: Date, retryAfter: Double?) -> Date? {
        let delay = max(schedule.delay(afterFailures: item.attempts + 1), min(retryAfter ?? 0, Self.longestRetryAfter))
        let next = ended.addingTimeInterval(delay)
        let deadline = item.entry.deadline
        let lifetime = deadline.timeIntervalSince(item.entry.created)
        let last = deadline.addingTimeInterval(-min(Self.finalAttemptLead, max(0, lifetime) / 4))
        if next < last { return next }
        guard ended < last else { return nil }
        let final = max(last, ended.addingTimeInterval(min(retryAfter ?? 0, Self.longestRetryAfter)))
        return final < deadline ? final : nil
    }

    private func abandon(_ item: OutboxItem, attempts: Int, error: String, outcome: Attempt) async {
        do {
            try await ledger.finishOutbox(id: item.id, state: .abandoned, now: now(), error: error)
            count("abandoned")
            logger.warning(event, "\(queue.rawValue) queue: gave up on \(item.entry.key) after \(attempts) attempt(s): \(error)")
            await finished(item, outcome)
        } catch {
            logger.warning(event, "\(queue.rawValue) queue: cannot record the outcome of item \(item.id): \(error)")
        }
    }

    private func count(_ outcome: String) {
        counters.withLock { $0.outcomes[outcome, default: 0] += 1 }
    }
}
