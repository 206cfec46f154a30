import HTTP

/// One client connection as a state machine without I/O.
///
/// Events come in — bytes read, the peer closed or hung up, a deferred reply or a sink came back, the socket
/// became writable, a deadline passed — each with the time it happened. Actions come out of `nextAction()`:
/// flush the queued bytes (heads, in-memory bodies, `sendfile` regions), watch the socket for these events,
/// arm a deadline, run work off the loop, linger, close. The machine parses heads, asks the responder, frames
/// bodies (100-continue, limits, the body budget and rate), keeps pipelined answers in order and batches them
/// into one write, and decides every timeout; the shell (`Connection`) only runs the actions.
package struct ConnectionStateMachine {
    package enum State: Equatable {
        /// Waiting for (the rest of) a request head.
        case readingHead
        /// Reading a request body.
        case readingBody
        /// A body piece is with the sink; reading resumes when it is taken.
        case waitingForSink
        /// The responder is computing the response off the loop.
        case waitingForReply
        /// The responder is deciding off the loop how to treat the request; its body is not read meanwhile.
        case waitingForHandling
        /// The last response is queued; the connection closes (or lingers) once it is sent.
        case draining
        /// Output is shut down; reading and dropping until the peer closes or the deadline passes.
        case lingering
        case closed
    }

    /// The request being answered.
    struct Exchange {
        var method: HTTPMethod
        var target: String
        var isHead: Bool
        var started: UInt64
        /// Budget bytes its body holds, given back once the answer is sent.
        var reserved = 0
    }

    /// A response queued but not yet sent in full.
    struct Queued {
        var end: Int64
        var method: HTTPMethod
        var target: String
        var status: Int
        var route: String
        var bodyBytes: Int64
        var started: UInt64
        var reserved: Int
        var requestID: String?
        var clientAddress: String?
        /// Where its body starts in the outbound byte count (after its head).
        var bodyStart: Int64 = 0
        /// The response's tag.
        var tag: (any Sendable)? = nil
    }

    let environment: ConnectionEnvironment
    let remoteAddress: String
    package internal(set) var state = State.readingHead
    var configuration: ServerConfiguration { environment.configuration }

    var input: [UInt8] = []
    var parser: RequestHeadParser
    var outbound = OutboundQueue()
    var exchange: Exchange?
    var body: BodyReader?
    var keepAlive = true
    var lingerAfterResponse = false
    var peerClosedInput = false
    /// The socket hung up while the sink had a piece: the connection ends when the sink returns.
    var hungUpWhileBusy = false
    /// Responses queued and not yet sent: the oldest inline, the rest (pipelining) behind it.
    var oldestQueued: Queued?
    var moreQueued: [Queued] = []
    /// The last target seen, reused while the same target repeats (no String per request on a keep-alive hot path).
    var lastTarget = ""

    var headDeadline: UInt64
    var headDeadlineIsIdle = false
    var lingerDeadline: UInt64 = 0
    var lastWriteProgress: UInt64 = 0
    var lingerDiscarded = 0

    // Actions not yet taken by the shell.
    var pendingAbort: (any RequestBodySink)?
    var pendingLater: (@Sendable () async -> Response)?
    var pendingDecision: (@Sendable () async -> Handling)?
    /// The framing of the request whose handling is being decided off the loop.
    var deciding: (framing: BodyFraming, expectsContinue: Bool)?
    var pendingPiece: (sink: any RequestBodySink, bytes: [UInt8])?
    var pendingHalfClose = false
    var closeDelivered = false
    var armedInterest = Interest.read
    var armedDeadline: UInt64 = 0

    /// A new connection, accepted at `now`: it is expected to send a request within the header timeout.
    package init(environment: ConnectionEnvironment, remoteAddress: String, now: MonotonicTime) {
        self.environment = environment
        self.remoteAddress = remoteAddress
        parser = RequestHeadParser(limits: environment.configuration.limits)
        headDeadline = now.milliseconds + environment.configuration.headerTimeoutMilliseconds
    }

    /// Whether the shell should read from the socket now.
    package var acceptsInput: Bool {
        guard !outbound.isBlocked, !peerClosedInput else { return false }
        return state == .readingHead || state == .readingBody || state == .lingering
    }

    // MARK: - Events

    /// Bytes arrived.
    package mutating func received(_ bytes: UnsafeRawBufferPointer, now: MonotonicTime) {
        switch state {
        case .closed:
            return
        case .lingering:
            lingerDiscarded += bytes.count
            if lingerDiscarded > 1 << 20 { close() }
            return
        default:
            break
        }
        if input.isEmpty {
            let consumed = advance(bytes, now: now)
            if state != .closed, state != .lingering, consumed < bytes.count {
                input = Array(UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
            }
        } else {
            input.append(contentsOf: bytes)
            processInput(now: now)
        }
        if state == .readingHead, !input.isEmpty, headDeadlineIsIdle {
            // The first byte of the next request: the header timeout runs from now.
            headDeadline = now.milliseconds + configuration.headerTimeoutMilliseconds
            headDeadlineIsIdle = false
        }
    }

    /// The peer closed its sending side (a read returned 0).
    package mutating func peerClosed(now: MonotonicTime) {
        peerClosedInput = true
        switch state {
        case .readingHead:
            if outbound.isEmpty { close() } else { keepAlive = false; state = .draining }
        case .readingBody:
            abortBody()
            close()
        case .waitingForSink:
            hungUpWhileBusy = true
        case .waitingForReply, .waitingForHandling, .draining:
            keepAlive = false
        case .lingering:
            close()
        case .closed:
            break
        }
    }

    /// The socket reported a hang-up or an error (reported even with no interest set).
    package mutating func hungUp() {
        switch state {
        case .waitingForReply, .waitingForHandling: close()
        case .waitingForSink: hungUpWhileBusy = true
        default: break
        }
    }

    /// A read or write failed.
    package mutating func failed() {
        if state == .readingBody { abortBody() }
        close()
    }

    /// The socket can take more bytes.
    package mutating func writable() { outbound.outputBecameWritable() }

    /// The deferred reply is ready.
    package mutating func replyReady(_ response: Response, now: MonotonicTime) {
        guard state == .waitingForReply else { return }
        transmit(response, now: now)
        processInput(now: now)
    }

    /// The deferred decision is ready: the request is treated as `handling` says, and what was read after its
    /// head meanwhile is taken up. False when the connection no longer wants it (a sink in it is the caller's to abort).
    package mutating func handlingReady(_ handling: Handling, now: MonotonicTime) -> Bool {
        guard state == .waitingForHandling, let deciding else { return false }
        self.deciding = nil
        take(handling, framing: deciding.framing, expectsContinue: deciding.expectsContinue, now: now)
        processInput(now: now)
        // The peer closed while the decision was made: its close is taken up as it would have been had the
        // decision come at once (a body it did not finish sending will never complete).
        if peerClosedInput { peerClosed(now: now) }
        return true
    }

    /// The sink took its piece. False when the connection no longer wants the sink (the caller aborts it).
    package mutating func sinkTookPiece(now: MonotonicTime) -> Bool {
        guard state == .waitingForSink else { return false }
        if hungUpWhileBusy { close(); return false }
        state = .readingBody
        body?.resume(now: now.milliseconds)
        if body?.isComplete == true { bodyFinished(now: now) } else { processInput(now: now) }
        return true
    }

    /// The sink refused the body (and was aborted): its response is sent and the connection closes.
    package mutating func sinkRefused(_ response: Response, now: MonotonicTime) {
        guard state == .waitingForSink else { return }
        releaseBody()
        if hungUpWhileBusy { close(); return }
        keepAlive = false
        lingerAfterResponse = true
        transmit(response, now: now)
    }

    /// The deadline armed last may have passed.
    package mutating func deadlinePassed(now: MonotonicTime) {
        let deadline = currentDeadline
        guard deadline != 0, now.milliseconds >= deadline else { return }
        if outbound.isBlocked {
            // The client stopped reading: the write stall timeout.
            if state == .readingBody { abortBody() }
            close()
            return
        }
        switch state {
        case .readingHead, .lingering:
            // A timed-out head is closed without an answer (README: Timeouts).
            close()
        case .readingBody:
            let configuration = self.configuration
            if body?.isFastEnough(now: now.milliseconds, configuration) == false {
                abortBody()
                fail(.bodyTooSlow, now: now)
            }
        default:
            break
        }
    }

    /// The server is stopping: idle connections close now, busy ones after their current response.
    package mutating func stopRequested() {
        switch state {
        case .readingHead:
            if outbound.isEmpty { close() } else { keepAlive = false; state = .draining }
        case .lingering:
            close()
        default:
            keepAlive = false
        }
    }

    // MARK: - Actions

    /// The next thing the shell must do, or nil when there is nothing until the next event.
    package mutating func nextAction() -> ConnectionAction? {
        if let sink = pendingAbort {
            pendingAbort = nil
            return .abort(sink)
        }
        if state == .closed {
            if closeDelivered { return nil }
            closeDelivered = true
            return .close
        }
        if let work = pendingLater {
            pendingLater = nil
            return .runLater(work)
        }
        if let work = pendingDecision {
            pendingDecision = nil
            return .decide(work)
        }
        if let piece = pendingPiece {
            pendingPiece = nil
            return .consume(piece.sink, piece.bytes)
        }
        if !outbound.isEmpty, !outbound.isBlocked { return .flush }
        if pendingHalfClose {
            pendingHalfClose = false
            return .halfClose
        }
        let interest = currentInterest
        if interest != armedInterest {
            armedInterest = interest
            return .watch(interest)
        }
        let deadline = currentDeadline
        if deadline != armedDeadline {
            armedDeadline = deadline
            return .arm(deadline: deadline)
        }
        return nil
    }

    /// Writes what is queued to `output`.
    package mutating func flush(to output: inout some ConnectionOutput, now: MonotonicTime) {
        guard state != .closed else { return }
        let before = outbound.sentTotal
        let outcome = outbound.flush(to: &output)
        if outbound.sentTotal > before || outcome == .blocked { lastWriteProgress = now.milliseconds }
        completeSentExchanges(now: now)
        switch outcome {
        case .failed:
            if state == .readingBody { abortBody() }
            close()
        case .blocked:
            break
        case .drained:
            switch state {
            case .draining:
                if lingerAfterResponse && !peerClosedInput {
                    state = .lingering
                    pendingHalfClose = true
                    input = []
                    lingerDeadline = now.milliseconds + configuration.lingerMilliseconds
                } else {
                    close()
                }
            case .readingHead:
                headDeadlineIsIdle = input.isEmpty
                headDeadline = now.milliseconds + (input.isEmpty ? configuration.idleTimeoutMilliseconds
                                                                : configuration.headerTimeoutMilliseconds)
                processInput(now: now)
            default:
                break
            }
        }
    }

    /// Lends the loop's output buffer while there is something to write, and gives it back after.
    package mutating func borrowOutputBuffer(_ scratch: inout [UInt8]) { outbound.borrow(&scratch) }
    package mutating func returnOutputBuffer(_ scratch: inout [UInt8]) { outbound.giveBack(&scratch) }

    var currentInterest: Interest {
        if hungUpWhileBusy { return .detached }
        if outbound.isBlocked { return .write }
        return acceptsInput ? .read : .none
    }

    /// The monotonic millisecond at which `deadlinePassed` must be called; 0 for none.
    var currentDeadline: UInt64 {
        if outbound.isBlocked { return lastWriteProgress + configuration.writeTimeoutMilliseconds }
        switch state {
        case .readingHead: return headDeadline
        case .readingBody: return body?.deadline(configuration) ?? 0
        case .lingering: return lingerDeadline
        default: return 0
        }
    }

    /// Ends the connection: the shell closes the socket at the next action.
    mutating func close() {
        guard state != .closed else { return }
        if state != .waitingForSink, case .stream(let sink) = body?.mode { pendingAbort = sink }
        releaseBody()
        pendingLater = nil
        pendingDecision = nil
        deciding = nil
        pendingPiece = nil
        pendingHalfClose = false
        var reserved = exchange?.reserved ?? 0
        if let oldest = oldestQueued {
            reserved += oldest.reserved
            reportInterrupted(oldest)
        }
        for queued in moreQueued { reserved += queued.reserved }
        environment.budget.release(reserved)
        exchange = nil
        oldestQueued = nil
        moreQueued = []
        outbound.discard()
        input = []
        state = .closed
    }
}
