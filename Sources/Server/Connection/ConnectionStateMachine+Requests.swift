import Glibc
import HTTP

/// Requests: parsing, asking the responder, bodies, queueing answers in order.
extension ConnectionStateMachine {
    /// Pipelined answers queued beyond this many bytes wait for a flush before more requests are parsed.
    static let outboundBatchLimit = 256 * 1024
    /// A body a route does not want is read and dropped up to this size; a larger one closes the connection.
    static let discardableBodyLimit: Int64 = 64 * 1024

    /// Parses buffered input: runs as long as requests complete synchronously.
    mutating func processInput(now: MonotonicTime) {
        guard !input.isEmpty, state == .readingHead || state == .readingBody else { return }
        var buffer: [UInt8] = []
        swap(&buffer, &input)
        let consumed = buffer.withUnsafeBytes { advance($0, now: now) }
        guard state != .closed, state != .lingering else { return }
        if consumed < buffer.count {
            buffer.removeFirst(consumed)
            input = input.isEmpty ? buffer : buffer + input
        }
    }

    /// Consumes what it can of `bytes`; returns how many were consumed.
    mutating func advance(_ bytes: UnsafeRawBufferPointer, now: MonotonicTime) -> Int {
        var offset = 0
        while true {
            switch state {
            case .readingHead:
                guard offset < bytes.count else { parser.reset(); return offset }
                // Back-pressure: a client that pipelines faster than it reads is answered as it reads.
                if outbound.isBlocked || outbound.pendingBytes >= Self.outboundBatchLimit { return offset }
                let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                switch parser.scan(rest) {
                case .incomplete:
                    return offset
                case .failure(let error):
                    parser.reset()
                    fail(ProtocolError(error), now: now)
                    return bytes.count
                case .head(let index):
                    parser.reset()
                    offset += index.consumed
                    begin(RawRequestHead(buffer: rest, index: index), now: now)
                }
            case .readingBody:
                guard offset < bytes.count else { return offset }
                offset += consumeBody(UnsafeRawBufferPointer(rebasing: bytes[offset...]), now: now)
            default:
                return offset
            }
        }
    }

    private mutating func begin(_ raw: RawRequestHead, now: MonotonicTime) {
        keepAlive = raw.index.keepAlive && !environment.stopping
        let context = RequestContext(remoteAddress: remoteAddress, loopIndex: environment.loopIndex)
        let framing = raw.index.framing
        let expectsContinue = raw.index.expectsContinue
        if let response = environment.responder.respond(toRaw: raw, context: context) {
            exchange = Exchange(method: raw.method, target: target(of: raw), isHead: raw.method == .head, started: now.nanoseconds)
            reply(.response(response), framing: framing, expectsContinue: expectsContinue, now: now)
            return
        }
        let head = RequestHead(raw)
        exchange = Exchange(method: head.method, target: head.target, isHead: head.method == .head, started: now.nanoseconds)
        take(environment.responder.handle(head, context: context), framing: framing, expectsContinue: expectsContinue, now: now)
    }

    /// Treats the request in progress as the responder decided (now, or off the loop).
    mutating func take(_ handling: Handling, framing: BodyFraming, expectsContinue: Bool, now: MonotonicTime) {
        switch handling {
        case .reply(let answer):
            reply(answer, framing: framing, expectsContinue: expectsContinue, now: now)
        case .collectBody(let limit, let then):
            startBody(.collect(then: then), limit: Int64(limit), framing: framing, expectsContinue: expectsContinue, now: now)
        case .streamBody(let limit, let sink):
            startBody(.stream(sink), limit: limit, framing: framing, expectsContinue: expectsContinue, now: now)
        case .decideLater(let work):
            state = .waitingForHandling
            deciding = (framing, expectsContinue)
            pendingDecision = work
        }
    }

    /// The target for the exchange record, reusing the last one while it repeats.
    private mutating func target(of raw: RawRequestHead) -> String {
        guard environment.observer != nil else { return "" }
        let bytes = raw.targetBytes
        if !raw.targetHasImpliedSlash, lastTarget.utf8.count == bytes.count,
           lastTarget.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) == true {
            return lastTarget
        }
        lastTarget = raw.makeTarget()
        return lastTarget
    }

    private mutating func reply(_ answer: Reply, framing: BodyFraming, expectsContinue: Bool, now: MonotonicTime) {
        guard framing.hasBody else { deliver(answer, now: now); return }
        if case .contentLength(let n) = framing, n <= Self.discardableBodyLimit, !expectsContinue {
            startBody(.discard(then: answer), limit: n, framing: framing, expectsContinue: false, now: now)
        } else {
            // The body is not wanted: answer, then close instead of reading it.
            keepAlive = false
            lingerAfterResponse = true
            deliver(answer, now: now)
        }
    }

    private mutating func startBody(_ mode: BodyReader.Mode, limit: Int64, framing: BodyFraming, expectsContinue: Bool,
                                    now: MonotonicTime) {
        var reserved = 0
        if case .contentLength(let n) = framing {
            if n > limit {
                if case .stream(let sink) = mode { pendingAbort = sink }
                fail(.bodyTooLarge(limit: limit), now: now)
                return
            }
            if case .collect = mode {
                // The body budget: refuse before reading rather than buffer past it.
                guard environment.budget.reserve(Int(n)) else {
                    fail(.overloaded(retryAfterSeconds: 2), now: now)
                    return
                }
                reserved = Int(n)
            }
        }
        body = BodyReader(mode: mode, framing: framing, limit: limit, reserved: reserved, now: now.milliseconds)
        if body?.isComplete == true { bodyFinished(now: now); return }
        // RFC 9110 §10.1.1: the body is wanted, so say so before the client sends it.
        if expectsContinue { outbound.append(ResponseEncoder.continueLine) }
        state = .readingBody
    }

    /// Takes body bytes; returns how many were used.
    private mutating func consumeBody(_ bytes: UnsafeRawBufferPointer, now: MonotonicTime) -> Int {
        guard var reader = body else { return 0 }
        body = nil
        let (used, step) = reader.consume(bytes, now: now.milliseconds, budget: environment.budget)
        body = reader
        switch step {
        case .needMore:
            break
        case .failed(let error):
            abortBody()
            fail(error, now: now)
            return bytes.count
        case .pieceReady:
            guard case .stream(let sink) = reader.mode else { break }
            let piece = body!.takePiece()
            pendingPiece = (sink, piece)
            state = .waitingForSink
        case .complete:
            bodyFinished(now: now)
        }
        return used
    }

    mutating func bodyFinished(now: MonotonicTime) {
        guard var reader = body else { return }
        body = nil
        exchange?.reserved += reader.reserved
        switch reader.mode {
        case .collect(let then):
            deliver(then(reader.takeCollected()), now: now)
        case .discard(let then):
            deliver(then, now: now)
        case .stream(let sink):
            deliver(.later { await sink.finish() }, now: now)
        }
    }

    /// Tells a streaming sink its body will not complete, and drops the body.
    mutating func abortBody() {
        if case .stream(let sink) = body?.mode { pendingAbort = sink }
        releaseBody()
    }

    /// Drops the body and gives its budget back.
    mutating func releaseBody() {
        if let body { environment.budget.release(body.reserved) }
        body = nil
    }

    private mutating func deliver(_ answer: Reply, now: MonotonicTime) {
        switch answer {
        case .response(let response):
            transmit(response, now: now)
        case .later(let work):
            state = .waitingForReply
            pendingLater = work
        }
    }

    /// Answers a request the engine refuses, then closes the connection (after lingering).
    mutating func fail(_ error: ProtocolError, now: MonotonicTime) {
        var response = environment.responder.errorResponse(for: error)
        if let seconds = error.retryAfterSeconds, !response.headers.contains("retry-after") {
            response.headers.append("Retry-After", String(seconds))
        }
        response.closeConnection = true
        keepAlive = false
        lingerAfterResponse = true
        if exchange == nil {
            exchange = Exchange(method: .other("-"), target: "-", isHead: false, started: now.nanoseconds)
        }
        transmit(response, now: now)
    }

    /// Queues a response behind the ones before it.
    mutating func transmit(_ response: Response, now: MonotonicTime) {
        let current = exchange ?? Exchange(method: .other("-"), target: "-", isHead: false, started: now.nanoseconds)
        exchange = nil
        if response.closeConnection || environment.stopping { keepAlive = false }
        let includeBody = response.statusAllowsBody && !current.isHead
        let environment = self.environment
        let closing = !keepAlive
        outbound.appendBytes { ResponseEncoder.appendHead(of: response, closing: closing, environment: environment, to: &$0) }
        let bodyStart = outbound.queuedTotal
        if includeBody { outbound.append(response.body) }
        let queued = Queued(end: outbound.queuedTotal, method: current.method, target: current.target, status: response.status,
                            route: response.route, bodyBytes: includeBody ? response.body.length : 0, started: current.started,
                            reserved: current.reserved, requestID: response.requestID, clientAddress: response.clientAddress,
                            bodyStart: bodyStart, tag: response.tag)
        if oldestQueued == nil { oldestQueued = queued } else { moreQueued.append(queued) }
        if keepAlive {
            state = .readingHead
            headDeadlineIsIdle = input.isEmpty
            headDeadline = now.milliseconds + (input.isEmpty ? configuration.idleTimeoutMilliseconds
                                                            : configuration.headerTimeoutMilliseconds)
        } else {
            state = .draining
        }
    }

    /// Reports every exchange whose answer has been sent in full, and gives its body budget back.
    mutating func completeSentExchanges(now: MonotonicTime) {
        while let oldest = oldestQueued, oldest.end <= outbound.sentTotal {
            environment.budget.release(oldest.reserved)
            environment.observer?.exchangeCompleted(ExchangeRecord(
                method: oldest.method, target: oldest.target, status: oldest.status, route: oldest.route,
                bytesSent: oldest.bodyBytes, durationNanoseconds: now.nanoseconds &- oldest.started,
                remoteAddress: remoteAddress, loopIndex: environment.loopIndex,
                requestID: oldest.requestID, clientAddress: oldest.clientAddress ?? remoteAddress, tag: oldest.tag))
            oldestQueued = moreQueued.isEmpty ? nil : moreQueued.removeFirst()
        }
    }

    /// Reports the exchange being sent when the connection ends, with the body bytes written so far (called
    /// by `close()` before the queue is discarded).
    func reportInterrupted(_ queued: Queued) {
        guard let observer = environment.observer else { return }
        let written = max(0, min(queued.bodyBytes, outbound.sentTotal - queued.bodyStart))
        // Until the last write that made progress (the state machine keeps no clock of its own at close).
        let lastProgress = lastWriteProgress &* 1_000_000
        observer.exchangeInterrupted(ExchangeRecord(
            method: queued.method, target: queued.target, status: queued.status, route: queued.route, bytesSent: written,
            durationNanoseconds: lastProgress > queued.started ? lastProgress - queued.started : 0, remoteAddress: remoteAddress,
            loopIndex: environment.loopIndex, requestID: queued.requestID, clientAddress: queued.clientAddress ?? remoteAddress,
            tag: queued.tag))
    }
}
