import Dispatch
import Foundation
import Glibc
import Synchronization

/// Keeps this instance's access index in step with what every instance commits to a shared PostgreSQL
/// ledger (scale-out §2: within 1 s).
///
/// One dedicated thread owns one connection that `LISTEN`s on `PostgresLedgerStore.channel`. It polls
/// (`PostgresAccessReader.changed(since:)`) at once when a `NOTIFY` arrives or a writer of this instance asks
/// (`catchUp()`), and every `interval` (200 ms) regardless, so a lost notification costs at most that. After
/// every (re)connection it reloads the whole index, since notifications sent while it was away are lost.
/// A lost connection is retried with `ReconnectBackoff` (at most 5 s apart) until the database is back.
///
/// Who sends the `NOTIFY`: this feed, once per poll that this instance's writers asked for, in the poll's own
/// statement — not each write's transaction. PostgreSQL serializes the commits of notifying transactions
/// under one database-wide lock held through the commit's WAL flush, so a `NOTIFY` per write made every
/// write wait for the flushes of all the others (no group commit). The writes commit without it; the feed's
/// one `NOTIFY` covers every commit its writers made before the poll, on a session with `synchronous_commit
/// off` (a notification is a hint, not data: the changes it announces are already durable). The feed ignores
/// its own `NOTIFY` (it has just read those changes). An instance that dies between a commit and the feed's
/// poll leaves the change to the other instances' periodic polls: within `interval`.
final class PostgresChangeFeed: @unchecked Sendable {
    // @unchecked: `connection` and `mark` are touched only on the feed thread; the rest is behind `state`.
    private struct State {
        var connected = false
        var lastPollSucceeded = false
        var stopping = false
        var pollsStarted: UInt64 = 0
        var pollRequested = false
        var announceRequested = false
        var waiters: [Int: (target: UInt64, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter = 0
        var finished = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var statistics: LedgerPropagation
    }

    /// The longest pause between two polls.
    static let interval: Duration = .milliseconds(200)
    /// How long a writer waits for the feed to show its own commit before returning anyway.
    static let catchUpTimeout: Duration = .seconds(2)

    private let pool: PostgresPool
    private let index: AccessIndex
    private let state: Mutex<State>
    private let wake: (read: Int32, write: Int32)
    private var connection: PostgresConnection?
    private var mark = "0"

    init(pool: PostgresPool, index: AccessIndex) {
        self.pool = pool
        self.index = index
        self.state = Mutex(State(statistics: LedgerPropagation(lastConfirmed: Date())))
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        wake = (fds[0], fds[1])
    }

    deinit {
        if wake.read >= 0 { Glibc.close(wake.read) }
        if wake.write >= 0 { Glibc.close(wake.write) }
    }

    /// Starts the thread and returns once it has connected and loaded the index, or throws why it could not.
    func start() async throws(LedgerError) {
        guard wake.read >= 0 else { throw .openFailed(path: pool.location.description, message: "cannot create a pipe") }
        let outcome: LedgerError? = await withCheckedContinuation { continuation in
            let thread = Thread { self.run(started: continuation) }
            thread.name = "depot.ledger.feed"
            thread.start()
        }
        if let outcome { throw outcome }
    }

    /// Waits until a poll that started after this call has completed, so the index shows every commit made
    /// before it (a writer calls this after its commit). With `announce` (the writer changed access state),
    /// that poll also notifies the other instances' feeds. Returns at once while disconnected, and after
    /// `catchUpTimeout` at the latest.
    func catchUp(announce: Bool = true) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id: Int? = state.withLock { state in
                guard state.connected, !state.stopping else { return nil }
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters[id] = (state.pollsStarted + 1, continuation)
                state.pollRequested = true
                if announce { state.announceRequested = true }
                return id
            }
            guard let id else { return continuation.resume() }
            signal()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.catchUpTimeout / .milliseconds(1)))) {
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume()
            }
        }
    }

    /// Whether the feed's connection is up and has polled successfully in the last 3 s, and when the index
    /// was last confirmed current.
    var health: (up: Bool, lastConfirmed: Date) {
        state.withLock { state in
            let recent = Date().timeIntervalSince(state.statistics.lastConfirmed) < 3
            return (state.connected && state.lastPollSucceeded && recent, state.statistics.lastConfirmed)
        }
    }

    /// The feed's counters.
    var statistics: LedgerPropagation { state.withLock { $0.statistics } }

    /// Stops the thread (after the poll in flight) and closes its connection.
    func stop() async {
        let running = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard running else { return }
        signal()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { state -> Bool in
                if !state.finished { state.stopWaiters.append(continuation) }
                return state.finished
            }
            if finished { continuation.resume() }
        }
    }

    // MARK: - The feed thread

    private func run(started: CheckedContinuation<LedgerError?, Never>) {
        var starting: CheckedContinuation<LedgerError?, Never>? = started
        var failures = 0
        var lastPoll = ContinuousClock.now
        defer {
            connection?.close()
            connection = nil
            releaseWaiters(connected: false)
            let stopWaiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.finished = true
                defer { state.stopWaiters.removeAll() }
                return state.stopWaiters
            }
            stopWaiters.forEach { $0.resume() }
        }
        while !state.withLock({ $0.stopping }) {
            if connection == nil {
                do throws(PostgresError) {
                    try connect()
                    failures = 0
                    lastPoll = ContinuousClock.now
                    starting?.resume(returning: nil)
                    starting = nil
                } catch {
                    if let continuation = starting {
                        continuation.resume(returning: .openFailed(path: pool.location.description, message: error.message))
                        state.withLock { $0.stopping = true }
                        return
                    }
                    failures += 1
                    wait(socket: -1, timeout: ReconnectBackoff.delay(afterFailures: failures))
                    continue
                }
            }
            let requested = state.withLock { $0.pollRequested }
            let due = lastPoll + Self.interval
            let timeout = requested ? .zero : max(.zero, due - ContinuousClock.now)
            let socket = connection?.socketDescriptor ?? -1
            wait(socket: socket, timeout: timeout)
            guard !state.withLock({ $0.stopping }), let connection else { continue }
            do throws(PostgresError) {
                let own = connection.backendPID
                let received = try connection.notifications().filter {
                    $0.channel == PostgresLedgerStore.channel && $0.senderPID != own
                }.count
                let asked = state.withLock { state -> Bool in
                    state.statistics.notifications += received
                    return state.pollRequested
                }
                guard received > 0 || asked || ContinuousClock.now >= due else { continue }
                lastPoll = ContinuousClock.now
                try poll(connection)
            } catch {
                lose(error)
            }
        }
    }

    /// Connects, listens, and reloads the whole index (the mark moves to the load's snapshot).
    private func connect() throws(PostgresError) {
        let connection = try pool.connect(application: "depot-ledger-feed")
        do {
            // The polls are small index reads: JIT compilation (on by default, for statements the planner
            // thinks costly) would spend tens of milliseconds of CPU on each.
            try connection.execute("SET synchronous_commit = off; SET jit = off; LISTEN \(PostgresLedgerStore.channel)")
            let began = Date()
            let (mark, entries) = try PostgresAccessReader(connection: connection).all()
            index.replaceAll(entries)
            self.mark = mark
            self.connection = connection
            pool.backoff.recordSuccess()
            state.withLock { state in
                if state.statistics.resyncs > 0 { state.statistics.reconnects += 1 }
                state.statistics.resyncs += 1
                state.statistics.lastConfirmed = began
                state.connected = true
                state.lastPollSucceeded = true
            }
        } catch {
            connection.close()
            throw error
        }
    }

    /// Reads what changed since the mark and applies it; releases the writers waiting for this poll.
    private func poll(_ connection: PostgresConnection) throws(PostgresError) {
        let (number, announce) = state.withLock { state -> (UInt64, Bool) in
            defer {
                state.pollRequested = false
                state.announceRequested = false
            }
            state.pollsStarted += 1
            return (state.pollsStarted, state.announceRequested)
        }
        let began = Date()
        let (mark, entries) = try PostgresAccessReader(connection: connection)
            .changed(since: mark, announce: announce ? PostgresLedgerStore.channel : nil)
        index.update(entries)
        self.mark = mark
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.statistics.polls += 1
            state.statistics.refreshedOriginals += entries.count
            state.statistics.lastConfirmed = began
            state.lastPollSucceeded = true
            let done = state.waiters.filter { $0.value.target <= number }
            for id in done.keys { state.waiters.removeValue(forKey: id) }
            return done.values.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    /// Drops the connection after a failed poll; the loop reconnects (and resyncs).
    private func lose(_ error: PostgresError) {
        connection?.close()
        connection = nil
        state.withLock { state in
            state.statistics.failedPolls += 1
            state.lastPollSucceeded = false
        }
        releaseWaiters(connected: false)
    }

    private func releaseWaiters(connected: Bool) {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.connected = connected
            defer { state.waiters.removeAll() }
            return state.waiters.values.map(\.continuation)
        }
        waiting.forEach { $0.resume() }
    }

    /// Blocks the feed thread until `socket` is readable, the wake pipe is written, or `timeout` passes.
    private func wait(socket: Int32, timeout: Duration) {
        var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        if socket >= 0 { descriptors.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        let milliseconds = Int32(clamping: Int(timeout / .milliseconds(1)))
        _ = Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &drain, drain.count) > 0 {}
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }
}
