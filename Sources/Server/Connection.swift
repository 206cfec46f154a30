import CLinux
import Glibc
import HTTP

/// One client connection: reads requests, hands them to the responder, writes responses in order.
///
/// `@unchecked Sendable`: it is only ever touched on its loop's thread; other threads merely pass it
/// back to `loop.execute`.
final class Connection: @unchecked Sendable {
    enum State {
        /// Waiting for (the rest of) a request head.
        case idle
        /// Reading a request body.
        case readingBody
        /// A body piece is with the sink; reading resumes when it is taken.
        case waitingForSink
        /// The responder is computing the response off the loop.
        case waitingForReply
        /// A response is being written.
        case writing
        /// Output is shut down; reading and discarding until the peer closes or the deadline passes.
        case lingering
        case closed
    }

    enum BodyMode {
        case collect(limit: Int, then: @Sendable ([UInt8]) -> Reply)
        case stream(sink: any RequestBodySink)
        case discard(then: Reply)
    }

    let fd: Int32
    let generation: UInt32
    // unowned(unsafe): a loop outlives every connection it owns, and this avoids a reference-count round trip per access.
    unowned(unsafe) let loop: EventLoop
    let remoteAddress: String
    var token: UInt64 { UInt64(UInt32(bitPattern: fd)) | (UInt64(generation) << 32) }

    private(set) var state = State.idle
    var isClosed: Bool { state == .closed }
    /// Monotonic milliseconds at which the current wait times out; 0 for none.
    private(set) var deadline: UInt64 = 0
    private var interest: UInt32 = CLINUX_EPOLLIN

    private var input: [UInt8] = []
    private var parser: RequestHeadParser
    private var feeding = false
    private var peerClosedInput = false
    /// The socket hung up while a sink had a piece; the connection ends when the sink returns.
    private var hungUpWhileBusy = false

    // The request in progress.
    private var head: RequestHead?
    private var keepAlive = true
    private var requestStart: UInt64 = 0
    private var bodyMode: BodyMode?
    private var bodyRemaining: Int64 = 0
    private var chunkedDecoder: ChunkedDecoder?
    private var body: [UInt8] = []
    private var bodyPiece: [UInt8] = []
    private var bodyComplete = false
    private var lingerAfterResponse = false

    // The response in progress.
    private var queue: [BodySegment] = []
    private var queueIndex = 0
    private var segmentOffset: Int64 = 0
    private var responseStatus = 0
    private var responseRoute = ""
    private var bodyBytesSent: Int64 = 0
    private var discardedWhileLingering = 0

    init(fd: Int32, generation: UInt32, loop: EventLoop, remoteAddress: String) {
        self.fd = fd
        self.generation = generation
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.parser = RequestHeadParser(limits: loop.core.configuration.limits)
    }

    private var configuration: ServerConfiguration { loop.core.configuration }

    func start() {
        // A new connection gets the header timeout: it is expected to send a request now.
        deadline = loop.nowMilliseconds + configuration.headerTimeoutMilliseconds
    }

    // MARK: - Reading

    func readable() {
        switch state {
        case .idle, .readingBody: break
        case .lingering: discardInput(); return
        default: return
        }
        let scratch = loop.readScratch
        let n = read(fd, scratch.baseAddress, scratch.count)
        if n > 0 {
            if input.isEmpty {
                feeding = true
                let consumed = feed(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                feeding = false
                if state != .closed, consumed < n {
                    input = Array(UnsafeRawBufferPointer(rebasing: scratch[consumed..<n]))
                }
            } else {
                input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                drive()
            }
            if state == .idle, !input.isEmpty, deadlineIsIdle {
                deadline = loop.nowMilliseconds + configuration.headerTimeoutMilliseconds
                deadlineIsIdle = false
            }
        } else if n == 0 {
            peerClosed()
        } else if errno != EAGAIN && errno != EINTR {
            close()
        }
    }

    private var deadlineIsIdle = false

    /// Parses buffered input: runs as long as requests complete synchronously.
    private func drive() {
        guard !input.isEmpty, !feeding else { return }
        var buffer: [UInt8] = []
        swap(&buffer, &input)
        feeding = true
        let consumed = buffer.withUnsafeBytes { feed($0) }
        feeding = false
        guard state != .closed else { return }
        if consumed < buffer.count {
            buffer.removeFirst(consumed)
            if input.isEmpty { input = buffer } else { input = buffer + input }
        }
        if input.isEmpty { parser.reset() }
    }

    /// Consumes what it can of `bytes`; returns how many were consumed.
    private func feed(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while true {
            switch state {
            case .idle:
                guard offset < bytes.count else { parser.reset(); return offset }
                switch parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
                case .incomplete:
                    return offset
                case .failure(let error):
                    parser.reset()
                    failRequest(status: error.status, code: Self.code(for: error.status), message: error.message)
                    return bytes.count
                case .head(let parsed, let consumed):
                    offset += consumed
                    parser.reset()
                    begin(parsed)
                }
            case .readingBody:
                guard offset < bytes.count else { return offset }
                offset += consumeBody(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            default:
                return offset
            }
        }
    }

    private static func code(for status: Int) -> String {
        switch status {
        case 413: "too_large"
        case 414: "uri_too_long"
        case 431: "headers_too_large"
        case 501: "not_implemented"
        case 505: "version_not_supported"
        default: "bad_request"
        }
    }

    private func peerClosed() {
        peerClosedInput = true
        switch state {
        case .idle:
            close()
        case .readingBody, .waitingForSink:
            abortBody()
            close()
        case .lingering:
            close()
        case .waitingForReply, .writing:
            keepAlive = false
            updateInterest(interest & ~CLINUX_EPOLLIN)
        case .closed:
            break
        }
    }

    private func discardInput() {
        let scratch = loop.readScratch
        let n = read(fd, scratch.baseAddress, scratch.count)
        if n > 0 {
            discardedWhileLingering += n
            if discardedWhileLingering > 1 << 20 { close() }
        } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
            close()
        }
    }

    // MARK: - Requests

    private func begin(_ parsed: RequestHead) {
        head = parsed
        keepAlive = parsed.keepAlive && !loop.stopping
        requestStart = clinux_monotonic_ns()
        deadline = 0
        let context = RequestContext(remoteAddress: remoteAddress, loopIndex: loop.index)
        let handling = loop.core.responder.handle(parsed, context: context)
        switch handling {
        case .reply(let reply):
            guard parsed.framing.hasBody else { deliver(reply); return }
            if case .contentLength(let n) = parsed.framing, n <= 64 * 1024, !parsed.expectsContinue {
                startBody(.discard(then: reply), limit: n)
            } else {
                // The body is not wanted: answer, then close instead of reading it.
                keepAlive = false
                lingerAfterResponse = true
                deliver(reply)
            }
        case .collectBody(let limit, let then):
            startBody(.collect(limit: limit, then: then), limit: Int64(limit))
        case .streamBody(let limit, let sink):
            startBody(.stream(sink: sink), limit: limit)
        }
    }

    private func startBody(_ mode: BodyMode, limit: Int64) {
        guard let head else { return }
        bodyMode = mode
        bodyComplete = false
        body = []
        switch head.framing {
        case .none:
            bodyComplete = true
            bodyFinished()
            return
        case .contentLength(let n):
            if n > limit {
                abortBody()
                failRequest(status: 413, code: "too_large", message: "The request body is larger than \(limit) bytes.")
                return
            }
            bodyRemaining = n
            if case .collect = mode { body.reserveCapacity(Int(n)) }
            if n == 0 { bodyComplete = true; bodyFinished(); return }
        case .chunked:
            chunkedDecoder = ChunkedDecoder(maxBodyBytes: limit)
        }
        if head.expectsContinue {
            // RFC 9110 §10.1.1: the body is wanted, so say so before the client sends it.
            let line = "HTTP/1.1 100 Continue\r\n\r\n"
            let written = line.utf8.withContiguousStorageIfAvailable { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } ?? -1
            if written != line.utf8.count { abortBody(); close(); return }
        }
        state = .readingBody
        deadline = loop.nowMilliseconds + configuration.bodyTimeoutMilliseconds
    }

    /// Takes body bytes; returns how many were used.
    private func consumeBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let mode = bodyMode else { return 0 }
        deadline = loop.nowMilliseconds + configuration.bodyTimeoutMilliseconds
        var used = 0
        if var decoder = chunkedDecoder {
            do {
                used = try decoder.decode(bytes) { piece in take(piece, mode: mode) }
            } catch {
                chunkedDecoder = nil
                abortBody()
                if error == .tooLarge {
                    failRequest(status: 413, code: "too_large", message: "The request body is too large.")
                } else {
                    failRequest(status: 400, code: "bad_request", message: "Malformed chunked body.")
                }
                return bytes.count
            }
            chunkedDecoder = decoder
            if decoder.isDone { bodyComplete = true }
        } else {
            let take = Int(min(Int64(bytes.count), bodyRemaining))
            self.take(UnsafeRawBufferPointer(rebasing: bytes[0..<take]), mode: mode)
            bodyRemaining -= Int64(take)
            used = take
            if bodyRemaining == 0 { bodyComplete = true }
        }
        if case .stream = mode, !bodyPiece.isEmpty {
            handPieceToSink()
            return used
        }
        if bodyComplete { bodyFinished() }
        return used
    }

    private func take(_ piece: UnsafeRawBufferPointer, mode: BodyMode) {
        switch mode {
        case .collect: body.append(contentsOf: piece)
        case .stream: bodyPiece.append(contentsOf: piece)
        case .discard: break
        }
    }

    private func handPieceToSink() {
        guard case .stream(let sink) = bodyMode else { return }
        let piece = bodyPiece
        bodyPiece = []
        state = .waitingForSink
        deadline = 0
        updateInterest(0)
        let loop = self.loop
        let generation = self.generation
        Task(executorPreference: WorkerPool.shared) {
            do throws(ResponseError) {
                try await sink.consume(piece)
                loop.execute { [self] in
                    guard self.generation == generation, state == .waitingForSink else { return }
                    if hungUpWhileBusy { close(); return }
                    state = .readingBody
                    deadline = loop.nowMilliseconds + configuration.bodyTimeoutMilliseconds
                    if bodyComplete { bodyFinished() } else { updateInterest(CLINUX_EPOLLIN); drive() }
                }
            } catch {
                await sink.abort()
                loop.execute { [self] in
                    guard self.generation == generation, state == .waitingForSink else { return }
                    bodyMode = nil
                    keepAlive = false
                    lingerAfterResponse = true
                    transmit(error.response)
                }
            }
        }
    }

    private func bodyFinished() {
        guard let mode = bodyMode else { return }
        bodyMode = nil
        chunkedDecoder = nil
        switch mode {
        case .collect(_, let then):
            let collected = body
            body = []
            deliver(then(collected))
        case .discard(let then):
            deliver(then)
        case .stream(let sink):
            deliver(.later { await sink.finish() })
        }
    }

    private func abortBody() {
        if case .stream(let sink) = bodyMode {
            Task(executorPreference: WorkerPool.shared) { await sink.abort() }
        }
        bodyMode = nil
        chunkedDecoder = nil
        body = []
        bodyPiece = []
    }

    /// Answers a request that cannot be served with an error, then closes the connection.
    private func failRequest(status: Int, code: String, message: String) {
        var response = loop.core.responder.errorResponse(status: status, code: code, message: message)
        response.closeConnection = true
        keepAlive = false
        lingerAfterResponse = true
        if head == nil { requestStart = clinux_monotonic_ns() }
        transmit(response)
    }

    private func deliver(_ reply: Reply) {
        switch reply {
        case .response(let response):
            transmit(response)
        case .later(let work):
            state = .waitingForReply
            deadline = 0
            updateInterest(0)
            let loop = self.loop
            let generation = self.generation
            Task(executorPreference: WorkerPool.shared) {
                let response = await work()
                loop.execute { [self] in
                    guard self.generation == generation, state == .waitingForReply else { return }
                    transmit(response)
                }
            }
        }
    }

    // MARK: - Writing

    private func transmit(_ response: Response) {
        if response.closeConnection { keepAlive = false }
        if loop.stopping { keepAlive = false }
        let isHead = head?.method == .head
        let includeBody = response.statusAllowsBody && !isHead
        responseStatus = response.status
        responseRoute = response.route
        bodyBytesSent = includeBody ? response.body.length : 0

        var out = loop.output
        loop.output = []
        out.removeAll(keepingCapacity: true)
        ResponseHead.appendStatusLine(response.status, to: &out)
        out.append(contentsOf: Self.serverLine)
        out.append(contentsOf: loop.dateLine)
        if let encoded = response.encodedHeaders {
            out.append(contentsOf: encoded)
        } else {
            ResponseHead.appendFields(response.headers, to: &out)
        }
        if response.statusAllowsBody {
            out.append(contentsOf: Self.contentLengthPrefix)
            ResponseHead.appendDecimal(response.body.length, to: &out)
            out.append(0x0D); out.append(0x0A)
        }
        if !keepAlive { out.append(contentsOf: Self.connectionClose) }
        out.append(0x0D); out.append(0x0A)

        queue.removeAll(keepingCapacity: true)
        queueIndex = 0
        segmentOffset = 0
        if includeBody {
            switch response.body {
            case .empty: break
            case .bytes(let bytes):
                out.append(contentsOf: bytes)
            case .file(let region):
                // An empty file has nothing to send: queueing it would hold the head back (MSG_MORE) with no
                // later write to release it.
                if region.length > 0 { queue.append(.file(region)) }
            case .segments(let segments):
                queue.append(contentsOf: segments.filter { $0.length > 0 })
            }
        }
        // The head (and an in-memory body) go out in one write; file bodies follow with sendfile.
        let total = out.count
        let written = out.withUnsafeBytes { send(fd, $0.baseAddress, total, Int32(MSG_NOSIGNAL) | (queue.isEmpty ? 0 : Int32(MSG_MORE))) }
        if written == total {
            loop.output = out
            if queue.isEmpty { responseFinished() } else { state = .writing; flushQueue() }
            return
        }
        if written < 0 && errno != EAGAIN && errno != EINTR {
            loop.output = out
            close()
            return
        }
        let done = max(0, written)
        queue.insert(.bytes(Array(out[done...])), at: 0)
        out.removeAll(keepingCapacity: true)
        loop.output = out
        state = .writing
        waitForWritable()
    }

    private static let serverLine = Array("Server: depot\r\n".utf8)
    private static let contentLengthPrefix = Array("Content-Length: ".utf8)
    private static let connectionClose = Array("Connection: close\r\n".utf8)

    func writable() {
        guard state == .writing else { return }
        flushQueue()
    }

    private func flushQueue() {
        while queueIndex < queue.count {
            let more = queueIndex + 1 < queue.count
            switch queue[queueIndex] {
            case .bytes(let bytes):
                let remaining = bytes.count - Int(segmentOffset)
                if remaining > 0 {
                    let n = bytes.withUnsafeBytes {
                        Glibc.send(fd, $0.baseAddress! + Int(segmentOffset), remaining, Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0))
                    }
                    if n < 0 {
                        if errno == EAGAIN || errno == EINTR { waitForWritable(); return }
                        close(); return
                    }
                    segmentOffset += Int64(n)
                    if n < remaining { waitForWritable(); return }
                }
            case .file(let region):
                let remaining = region.length - segmentOffset
                if remaining > 0 {
                    var position = region.offset + segmentOffset
                    let n = clinux_sendfile(fd, region.file.descriptor, &position, Int(min(remaining, 1 << 30)))
                    if n < 0 {
                        if errno == EAGAIN || errno == EINTR { waitForWritable(); return }
                        close(); return
                    }
                    if n == 0 {
                        // The file shrank under us: the promised length cannot be kept.
                        close(); return
                    }
                    segmentOffset += Int64(n)
                    if Int64(n) < remaining { waitForWritable(); return }
                }
            }
            queueIndex += 1
            segmentOffset = 0
        }
        queue.removeAll()
        queueIndex = 0
        responseFinished()
    }

    private func waitForWritable() {
        deadline = loop.nowMilliseconds + configuration.writeTimeoutMilliseconds
        updateInterest(CLINUX_EPOLLOUT)
    }

    private func responseFinished() {
        if let head {
            let elapsed = clinux_monotonic_ns() &- requestStart
            loop.core.observer?.exchangeCompleted(ExchangeRecord(
                method: head.method, target: head.target, status: responseStatus, route: responseRoute,
                bytesSent: bodyBytesSent, durationNanoseconds: elapsed, remoteAddress: remoteAddress, loopIndex: loop.index))
        } else {
            loop.core.observer?.exchangeCompleted(ExchangeRecord(
                method: .other("-"), target: "-", status: responseStatus, route: responseRoute,
                bytesSent: bodyBytesSent, durationNanoseconds: 0, remoteAddress: remoteAddress, loopIndex: loop.index))
        }
        head = nil
        if !keepAlive || peerClosedInput {
            if lingerAfterResponse && !peerClosedInput { linger() } else { close() }
            return
        }
        state = .idle
        deadlineIsIdle = input.isEmpty
        deadline = loop.nowMilliseconds + (input.isEmpty ? configuration.idleTimeoutMilliseconds : configuration.headerTimeoutMilliseconds)
        updateInterest(CLINUX_EPOLLIN)
        if !feeding { drive() }
    }

    // MARK: - Closing

    /// Half-closes and reads what the client still sends, so the response is not destroyed by a reset.
    private func linger() {
        shutdown(fd, Int32(SHUT_WR))
        state = .lingering
        input = []
        deadline = loop.nowMilliseconds + 2000
        updateInterest(CLINUX_EPOLLIN)
    }

    func deadlinePassed() {
        switch state {
        case .readingBody:
            abortBody()
            close()
        default:
            close()
        }
    }

    /// The socket reported a hang-up or an error. epoll reports these even with no interest set, so a peer that
    /// resets while its reply is computed (or its body piece consumed) would otherwise wake the loop again and
    /// again until then.
    func hungUp() {
        switch state {
        case .waitingForReply:
            close()
        case .waitingForSink:
            // `abort` must not overlap `consume`: stop hearing about the socket and end when the sink returns.
            hungUpWhileBusy = true
            loop.ignore(self)
        default:
            break
        }
    }

    func stopRequested() {
        switch state {
        case .idle, .lingering:
            // Nothing in flight: a lingering connection has had its answer.
            close()
        default:
            keepAlive = false
        }
    }

    private func updateInterest(_ events: UInt32) {
        guard events != interest, state != .closed else { return }
        interest = events
        loop.setInterest(self, events)
    }

    func close() {
        guard state != .closed else { return }
        if bodyMode != nil { abortBody() }
        state = .closed
        deadline = 0
        queue.removeAll()
        input = []
        loop.remove(self)
        Glibc.close(fd)
    }
}
