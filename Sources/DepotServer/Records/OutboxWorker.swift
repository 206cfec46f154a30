import Server
import Foundation
import Ledger
import Synchronization

/// Works through one of the ledger's outbox queues in the background: claims the items that are due and
/// first in line for their ordering key, attempts each (several keys at once, one item per key at a time),
/// and records the outcome: sent, retried later on `schedule` (never past the item's deadline), or
/// abandoned once the deadline has passed. Never on an event loop: the loop is a task that only awaits
/// (ledger calls run on the ledger's queues, attempts on URLSession).
///
/// Items survive restarts in the ledger; a worker that is killed leaves its claims, which the next process
/// (SQLite) or, after the lease, any instance (PostgreSQL) takes over.
final class OutboxWorker: Sendable {
    /// The result of one attempt.
    enum Attempt: Sendable, Equatable {
        /// Done: the receiver accepted it.
        case sent
        /// Done, and the string is kept with the item as its outcome (a consumption answer: the body sent).
        case sentRecording(String)
        /// Try again later (why, for the ledger and the logs).
        case failed(String)
        /// Give up now (a refusal that no retry can change).
        case refused(String)
    }

    /// Counters by outcome (`sent`, `failed`, `abandoned`) and the last known queue length.
    struct Statistics: Sendable, Equatable {
        var outcomes: [String: UInt64] = [:]
        var queueLength = 0
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
    private let state = Mutex<(wake: Bool, stopped: Bool, task: Task<Void, Never>?)>((false, false, nil))
    private let counters = Mutex(Statistics())

    /// A worker for `queue`; `attempt` sends one item, `finished` hears every final outcome (sent or
    /// abandoned) after the ledger recorded it.
    init(queue: OutboxQueue, ledger: Ledger, owner: String, schedule: RetrySchedule, lease: Double, batch: Int = 16,
         poll: Duration = .seconds(1), logger: Logger, now: @escaping @Sendable () -> Date = { Date() },
         attempt: @escaping @Sendable (OutboxItem) async -> Attempt,
         finished: @escaping @Sendable (OutboxItem, Attempt) async -> Void = { _, _ in }) {
        self.queue = queue
        self.ledger = ledger
        self.owner = owner
        self.schedule = schedule
        self.lease = lease
        self.batch = batch
        self.poll = poll
        self.logger = logger
        self.now = now
        self.attempt = attempt
        self.finished = finished
    }

    /// Starts the background loop (once).
    func start() {
        state.withLock { state in
            guard state.task == nil, !state.stopped else { return }
            state.task = Task(executorPreference: WorkerPool.shared) { [self] in await run() }
        }
    }

    /// Asks the loop to look at the queue now (something was just queued).
    func wake() {
        state.withLock { $0.wake = true }
    }

    /// Stops the loop after the attempts in flight, waiting for them at most `grace`; claims left behind are
    /// taken over by the next process.
    func stop(grace: Duration = .seconds(2)) async {
        guard let task = state.withLock({ state -> Task<Void, Never>? in
            state.stopped = true
            return state.task
        }) else { return }
        let done = Mutex(false)
        let waiter = Task { await task.value; done.withLock { $0 = true } }
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while !done.withLock({ $0 }), clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        _ = waiter
    }

    /// The counters so far.
    var statistics: Statistics { counters.withLock { $0 } }

    // MARK: - The loop

    /// The log event of this queue's lines.
    private var event: LogEvent { queue == .webhook ? .webhook : .consumption }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() async {
        while !isStopped {
            state.withLock { $0.wake = false }
            var claimed: [OutboxItem] = []
            do {
                claimed = try await ledger.claimOutbox(queue: queue, owner: owner, now: now(), lease: lease, limit: batch)
            } catch {
                logger.warning(event, "\(queue.rawValue) queue: cannot read the ledger: \(error)")
            }
            if !claimed.isEmpty {
                await withTaskGroup(of: Void.self) { group in
                    for item in claimed { group.addTask { await self.handle(item) } }
                }
            }
            if let length = try? await ledger.pendingOutboxCount(queue: queue) {
                counters.withLock { $0.queueLength = length }
            }
            // A full batch may have more behind it: look again at once.
            if claimed.count == batch { continue }
            await idle()
        }
    }

    /// Sleeps until `poll` passed, `wake()` was called, or the worker stops.
    private func idle() async {
        let clock = ContinuousClock()
        let until = clock.now + poll
        while clock.now < until {
            if state.withLock({ $0.wake || $0.stopped }) { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
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
                if case .sentRecording(let recorded) = result { outcome = recorded }
                try await ledger.finishOutbox(id: item.id, state: .sent, now: ended, outcome: outcome)
                count("sent")
                var done = item
                done.outcome = outcome
                await finished(done, result)
            case .refused(let reason):
                await abandon(item, attempts: item.attempts + 1, error: reason, outcome: result)
            case .failed(let reason):
                count("failed")
                let next = ended.addingTimeInterval(schedule.delay(afterFailures: item.attempts + 1))
                if ended >= item.entry.deadline {
                    await abandon(item, attempts: item.attempts + 1, error: reason, outcome: result)
                } else {
                    try await ledger.retryOutbox(id: item.id, nextAttempt: min(next, item.entry.deadline), error: reason)
                }
            }
        } catch {
            logger.warning(event, "\(queue.rawValue) queue: cannot record the outcome of item \(item.id): \(error)")
        }
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
