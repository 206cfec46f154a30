import CLinux
import Foundation
import Glibc
import HTTP
import Synchronization

/// One thread with its own epoll set, listening socket and connections.
///
/// `@unchecked Sendable`: every mutable property is touched only on the loop's own thread; other threads
/// reach the loop through `execute`, which is guarded by a mutex and wakes the loop through an eventfd.
package final class EventLoop: @unchecked Sendable {
    let index: Int
    let core: ServerCore
    let epollFD: Int32
    let wakeFD: Int32
    private(set) var listenFD: Int32
    private var connections: [Connection?] = []
    private(set) var connectionCount = 0
    private var nextGeneration: UInt32 = 1
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    /// Set (under `jobs`' lock) when the loop has run its last jobs: later jobs would never run.
    private var exited = false
    private let wakePending = Atomic<Bool>(false)

    /// Reused for every read on this loop (64 KiB), so an idle connection holds no buffer of its own.
    let readScratch: UnsafeMutableRawBufferPointer
    /// Lent to the connection that writes, so responses are assembled without a buffer per connection.
    var output: [UInt8] = []
    /// What this loop's connections share (configuration, responder, budget, the Date line, stopping).
    let environment: ConnectionEnvironment
    /// The connections' deadlines.
    var timers: TimerWheel
    /// Descriptors whose deadline passed in this iteration (reused).
    private var expired: [Int] = []

    /// The time of the current loop iteration.
    private(set) var now = MonotonicTime(nanoseconds: clinux_monotonic_ns())
    private var dateSecond = -1

    private(set) var stopping = false
    private var stopDeadline: UInt64 = 0

    private static let listenerToken = UInt64.max
    private static let wakeToken = UInt64.max - 1

    init(index: Int, core: ServerCore, listenFD: Int32) throws(SystemError) {
        self.index = index
        self.core = core
        self.listenFD = listenFD
        epollFD = clinux_epoll_create()
        guard epollFD >= 0 else { throw SystemError("epoll_create1") }
        wakeFD = clinux_eventfd()
        guard wakeFD >= 0 else { throw SystemError("eventfd") }
        readScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        output.reserveCapacity(16 * 1024)
        environment = ConnectionEnvironment(configuration: core.configuration, responder: core.responder, observer: core.observer,
                                            budget: core.budget, loopIndex: index, dateLine: [])
        timers = TimerWheel(now: clinux_monotonic_ms())
        guard listenFD < 0 || clinux_epoll_add(epollFD, listenFD, CLINUX_EPOLLIN, Self.listenerToken) == 0,
              clinux_epoll_add(epollFD, wakeFD, CLINUX_EPOLLIN, Self.wakeToken) == 0 else {
            throw SystemError("epoll_ctl")
        }
        refreshDate()
    }

    deinit {
        readScratch.deallocate()
        close(epollFD)
        close(wakeFD)
    }

    // MARK: - Cross-thread entry

    /// Runs `job` on this loop's thread soon. Safe from any thread.
    /// Queues `job` for the loop's thread. False (and the job dropped) when the loop has already exited.
    @discardableResult
    func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        let queued = jobs.withLock { queue -> Bool in
            if exited { return false }
            queue.append(job)
            return true
        }
        guard queued else { return false }
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
        return true
    }

    // MARK: - The loop

    func run() {
        // The loop keeps the default priority. Background work (Apple calls, the ledger, uploads) runs below
        // it (the worker pool asks for nice +5). Raising the loops to nice -5 was measured: with a load
        // generator on the same cores it starved the clients and put 4 ms (one scheduler tick) on the p99 of
        // 8-connection runs in most rounds, against 0.2 ms at the default, for no gain in requests/s.
        let events = UnsafeMutablePointer<clinux_event>.allocate(capacity: 256)
        defer { events.deallocate() }
        while true {
            let n = clinux_epoll_wait(epollFD, events, 256, waitTimeout())
            now = MonotonicTime(nanoseconds: clinux_monotonic_ns())
            refreshDate()
            if n > 0 {
                for i in 0..<Int(n) {
                    let event = events[i]
                    switch event.data {
                    case Self.listenerToken: acceptConnections()
                    case Self.wakeToken: drainWake()
                    default: dispatch(event)
                    }
                }
            }
            runJobs()
            let milliseconds = now.milliseconds
            timers.expire(now: milliseconds, into: &expired)
            if !expired.isEmpty {
                for fd in expired where fd < connections.count { connections[fd]?.deadlinePassed() }
                expired.removeAll(keepingCapacity: true)
            }
            if listenerPausedUntil != 0, milliseconds >= listenerPausedUntil, listenFD >= 0 {
                listenerPausedUntil = 0
                _ = clinux_epoll_add(epollFD, listenFD, CLINUX_EPOLLIN, Self.listenerToken)
            }
            if stopping {
                if connectionCount == 0 { break }
                if milliseconds >= stopDeadline {
                    closeAll()
                    break
                }
            }
        }
        runJobs()
        // Jobs queued from now on are refused (their owners clean up), then the last ones queued are run.
        let last = jobs.withLock { queue -> [@Sendable () -> Void] in
            exited = true
            let taken = queue
            queue.removeAll()
            return taken
        }
        for job in last { job() }
    }

    /// Until the next deadline, the end of a pause in accepting, or the end of the stop's grace period; -1: none.
    private func waitTimeout() -> Int32 {
        let milliseconds = clinux_monotonic_ms()
        var wait = timers.millisecondsUntilNext(now: milliseconds) ?? UInt64.max
        if listenerPausedUntil != 0 { wait = min(wait, listenerPausedUntil > milliseconds ? listenerPausedUntil - milliseconds : 0) }
        if stopping { wait = min(wait, stopDeadline > milliseconds ? stopDeadline - milliseconds : 0) }
        return wait == UInt64.max ? -1 : Int32(clamping: wait)
    }

    private func refreshDate() {
        let second = time(nil)
        if second != dateSecond {
            dateSecond = second
            environment.dateLine = ConnectionEnvironment.dateLine(forSecond: Int64(second))
        }
    }

    private func drainWake() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)
        wakePending.store(false, ordering: .releasing)
    }

    private func runJobs() {
        let pending = jobs.withLock { queue -> [@Sendable () -> Void] in
            let taken = queue
            queue.removeAll()
            return taken
        }
        for job in pending { job() }
    }

    private func dispatch(_ event: clinux_event) {
        let fd = Int(event.data & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: event.data >> 32)
        guard fd < connections.count, let connection = connections[fd], connection.generation == generation else { return }
        let bits = event.events
        if bits & (CLINUX_EPOLLERR | CLINUX_EPOLLHUP) != 0 { connection.hungUp() }
        if bits & (CLINUX_EPOLLOUT | CLINUX_EPOLLERR | CLINUX_EPOLLHUP) != 0, !connection.isClosed { connection.writable() }
        if bits & (CLINUX_EPOLLIN | CLINUX_EPOLLERR | CLINUX_EPOLLHUP) != 0, !connection.isClosed { connection.readable() }
    }

    private var nextTarget = 0
    /// When accepting paused for lack of descriptors, the time it resumes (0: not paused).
    private var listenerPausedUntil: UInt64 = 0

    /// Accepts what is waiting and hands each connection to the next loop in turn.
    private func acceptConnections() {
        let loops = core.loops.loops
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = clinux_accept(listenFD, &storage, &length)
            if fd < 0 {
                let code = errno
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
                    // Out of descriptors or memory: the pending connection stays queued, and the listener would
                    // wake this loop again at once. Stop listening for a moment instead of spinning.
                    _ = clinux_epoll_del(epollFD, listenFD)
                    listenerPausedUntil = now.milliseconds + 100
                }
                // EAGAIN: none left.
                return
            }
            _ = clinux_nodelay(fd)
            let remote = SocketAddress.from(&storage)?.description ?? "unknown"
            let target = loops.isEmpty ? self : loops[nextTarget % loops.count]
            nextTarget &+= 1
            if target === self {
                adopt(fd, remote: remote)
            } else {
                // A loop that has already stopped (shutdown) cannot take it: close it here.
                if !target.execute({ target.adopt(fd, remote: remote) }) { close(fd) }
            }
        }
    }

    /// Takes an accepted connection into this loop.
    func adopt(_ fd: Int32, remote: String) {
        if stopping {
            close(fd)
            return
        }
        let generation = nextGeneration
        nextGeneration &+= 1
        if nextGeneration == 0 { nextGeneration = 1 }
        let connection = Connection(fd: fd, generation: generation, loop: self, remoteAddress: remote)
        if Int(fd) >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: Int(fd) - connections.count + 64))
        }
        guard clinux_epoll_add(epollFD, fd, CLINUX_EPOLLIN, connection.token) == 0 else {
            close(fd)
            return
        }
        connections[Int(fd)] = connection
        connectionCount += 1
        core.openConnections.add(1, ordering: .relaxed)
        connection.start()
    }

    /// Changes what epoll reports for a connection (`detached`: nothing at all, hang-ups included).
    func watch(_ connection: Connection, _ interest: Interest) {
        let events: UInt32
        switch interest {
        case .none: events = 0
        case .read: events = CLINUX_EPOLLIN
        case .write: events = CLINUX_EPOLLOUT
        case .detached:
            _ = clinux_epoll_del(epollFD, connection.fd)
            return
        }
        _ = clinux_epoll_mod(epollFD, connection.fd, events, connection.token)
    }

    /// Forgets a closed connection.
    func remove(_ connection: Connection) {
        let fd = Int(connection.fd)
        if fd < connections.count, connections[fd] === connection {
            connections[fd] = nil
            connectionCount -= 1
            core.openConnections.subtract(1, ordering: .relaxed)
        }
    }

    // MARK: - Shutdown

    /// Stops accepting; idle connections close now, busy ones after their current response.
    func beginStop(graceMilliseconds: UInt64) {
        guard !stopping else { return }
        stopping = true
        environment.stopping = true
        stopDeadline = now.milliseconds + graceMilliseconds
        if listenFD >= 0 {
            _ = clinux_epoll_del(epollFD, listenFD)
            close(listenFD)
            listenFD = -1
        }
        for case let connection? in connections { connection.stopRequested() }
    }

    /// The grace period is over: closes what is still open, counted in ``ServerCore/cutOffAtStop``.
    private func closeAll() {
        core.cutOffAtStop.add(connectionCount, ordering: .relaxed)
        for case let connection? in connections { connection.forceClose() }
    }
}
