import CLinux
import Glibc

/// The I/O shell of one client connection: reads the socket into the machine, and runs the machine's actions
/// (writes, `sendfile`, epoll interest, deadlines, work off the loop, linger, close).
///
/// `@unchecked Sendable`: it is only ever touched on its loop's thread; other threads merely pass it back to
/// `loop.execute`.
final class Connection: @unchecked Sendable {
    let fd: Int32
    let generation: UInt32
    // unowned(unsafe): a loop outlives every connection it owns, and this avoids a reference-count round trip per access.
    unowned(unsafe) let loop: EventLoop
    private(set) var machine: ConnectionStateMachine
    private(set) var isClosed = false
    var token: UInt64 { UInt64(UInt32(bitPattern: fd)) | (UInt64(generation) << 32) }

    init(fd: Int32, generation: UInt32, loop: EventLoop, remoteAddress: String) {
        self.fd = fd
        self.generation = generation
        self.loop = loop
        machine = ConnectionStateMachine(environment: loop.environment, remoteAddress: remoteAddress, now: loop.now)
    }

    /// Arms the first deadline (the header timeout from accept).
    func start() { perform() }

    // MARK: - Events from the loop

    func readable() {
        guard !isClosed else { return }
        guard machine.acceptsInput else { return }
        let scratch = loop.readScratch
        let n = read(fd, scratch.baseAddress, scratch.count)
        let now = loop.now
        if n > 0 {
            machine.received(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), now: now)
        } else if n == 0 {
            machine.peerClosed(now: now)
        } else if errno == EAGAIN || errno == EINTR {
            return
        } else {
            machine.failed()
        }
        perform()
    }

    func writable() {
        guard !isClosed else { return }
        machine.writable()
        perform()
    }

    func hungUp() {
        guard !isClosed else { return }
        machine.hungUp()
        perform()
    }

    func deadlinePassed() {
        guard !isClosed else { return }
        machine.deadlinePassed(now: loop.now)
        perform()
    }

    func stopRequested() {
        guard !isClosed else { return }
        machine.stopRequested()
        perform()
    }

    /// Closes at once (the stop's grace period is over).
    func forceClose() {
        guard !isClosed else { return }
        machine.failed()
        perform()
    }

    // MARK: - Running the actions

    private func perform() {
        machine.borrowOutputBuffer(&loop.output)
        while let action = machine.nextAction() {
            switch action {
            case .flush:
                var output = SocketOutput(fd: fd)
                machine.flush(to: &output, now: MonotonicTime(nanoseconds: clinux_monotonic_ns()))
            case .watch(let interest):
                loop.watch(self, interest)
            case .arm(let deadline):
                loop.timers.schedule(Int(fd), at: deadline)
            case .runLater(let work):
                runLater(work)
            case .decide(let work):
                decide(work)
            case .consume(let sink, let piece):
                consume(piece, with: sink)
            case .abort(let sink):
                Task(executorPreference: WorkerPool.shared) { await sink.abort() }
            case .halfClose:
                shutdown(fd, Int32(SHUT_WR))
            case .close:
                isClosed = true
                loop.timers.schedule(Int(fd), at: 0)
                loop.remove(self)
                Glibc.close(fd)
                return
            }
        }
        machine.returnOutputBuffer(&loop.output)
    }

    private func runLater(_ work: @escaping @Sendable () async -> Response) {
        let loop = self.loop
        let generation = self.generation
        Task(executorPreference: WorkerPool.shared) { [self] in
            let response = await work()
            loop.execute { [self] in
                guard self.generation == generation, !isClosed else { return }
                machine.replyReady(response, now: loop.now)
                perform()
            }
        }
    }

    /// Runs the responder's deferred decision off the loop and takes it back on the loop. A sink in a decision
    /// the connection no longer wants (it closed meanwhile, or the loop stopped) is aborted.
    private func decide(_ work: @escaping @Sendable () async -> Handling) {
        let loop = self.loop
        Task(executorPreference: WorkerPool.shared) { [self] in
            let handling = await work()
            let queued = loop.execute { [self] in
                guard !isClosed else { Self.abandon(handling); return }
                if !machine.handlingReady(handling, now: loop.now) { Self.abandon(handling) }
                perform()
            }
            if !queued { Self.abandon(handling) }
        }
    }

    /// Aborts the sink of a handling that will not be taken.
    private static func abandon(_ handling: Handling) {
        guard case .streamBody(_, let sink) = handling else { return }
        Task(executorPreference: WorkerPool.shared) { await sink.abort() }
    }

    /// Hands a piece to the sink off the loop. `abort` never overlaps `consume`: when the connection no longer
    /// wants the sink (it closed meanwhile, or the loop stopped), the task that ran `consume` aborts it.
    private func consume(_ piece: [UInt8], with sink: any RequestBodySink) {
        let loop = self.loop
        Task(executorPreference: WorkerPool.shared) { [self] in
            do throws(ResponseError) {
                try await sink.consume(piece)
                let wanted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let queued = loop.execute { [self] in
                        let wanted = !isClosed && machine.sinkTookPiece(now: loop.now)
                        continuation.resume(returning: wanted)
                        perform()
                    }
                    if !queued { continuation.resume(returning: false) }
                }
                if !wanted { await sink.abort() }
            } catch {
                await sink.abort()
                loop.execute { [self] in
                    guard !isClosed else { return }
                    machine.sinkRefused(error.response, now: loop.now)
                    perform()
                }
            }
        }
    }
}

/// The socket as the machine's output.
struct SocketOutput: ConnectionOutput {
    let fd: Int32

    mutating func send(_ bytes: UnsafeRawBufferPointer, more: Bool) -> Int {
        let n = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0))
        if n >= 0 { return n }
        return errno == EAGAIN || errno == EINTR ? 0 : -1
    }

    mutating func sendFile(_ file: OpenFile, offset: Int64, count: Int) -> Int {
        var position = offset
        let n = clinux_sendfile(fd, file.descriptor, &position, count)
        if n > 0 { return n }
        // 0: the file shrank under us, and the promised length cannot be kept.
        if n == 0 { return -1 }
        return errno == EAGAIN || errno == EINTR ? 0 : -1
    }
}
