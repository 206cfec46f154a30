import HTTP

/// The body of the request in progress: how it is framed, what is done with it, how much of the body budget it
/// holds, and how fast it arrives.
///
/// The rate policy is the header timeout's idea applied to bodies: a body must bring at least
/// `bodyMinimumBytesPerSecond × window` bytes in every window of `bodyRateWindowMilliseconds` until it is
/// complete, and may never stall for longer than `bodyTimeoutMilliseconds`. Time the body spends waiting for
/// its sink (back-pressure from the server's side) does not count.
struct BodyReader {
    enum Mode {
        case collect(then: @Sendable ([UInt8]) -> Reply)
        case stream(any RequestBodySink)
        case discard(then: Reply)
    }

    enum Step {
        case needMore
        /// A piece for the sink is ready (`takePiece()`); the body may be complete too.
        case pieceReady
        case complete
        case failed(ProtocolError)
    }

    let mode: Mode
    private var remaining: Int64 = 0
    private var decoder: ChunkedDecoder?
    private var collected: [UInt8] = []
    private var piece: [UInt8] = []
    private(set) var isComplete = false
    /// Budget bytes this body holds (collected bodies only).
    private(set) var reserved: Int
    private var windowStart: UInt64
    private var windowBytes: Int64 = 0
    private var lastProgress: UInt64

    /// `reserved`: what was taken from the budget for a declared length already.
    init(mode: Mode, framing: BodyFraming, limit: Int64, reserved: Int, now: UInt64) {
        self.mode = mode
        self.reserved = reserved
        windowStart = now
        lastProgress = now
        switch framing {
        case .none:
            isComplete = true
        case .contentLength(let n):
            remaining = n
            if case .collect = mode { collected.reserveCapacity(Int(n)) }
            isComplete = n == 0
        case .chunked:
            decoder = ChunkedDecoder(maxBodyBytes: limit)
        }
    }

    private var isCollecting: Bool { if case .collect = mode { true } else { false } }

    /// Takes body bytes from the front of `bytes`; returns how many were used and what happened.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, now: UInt64, budget: BodyBudget) -> (used: Int, step: Step) {
        var used = 0
        if var decoder {
            var refused = false
            let collecting = isCollecting
            var gathered = 0
            do {
                used = try decoder.decode(bytes) { run in
                    if refused { return }
                    if collecting {
                        guard budget.reserve(run.count) else { refused = true; return }
                        gathered += run.count
                    }
                    take(run)
                }
            } catch {
                reserved += gathered
                self.decoder = nil
                return (bytes.count, .failed(error == .tooLarge ? .bodyTooLarge(limit: decoder.maxBodyBytes) : .malformedChunkedBody))
            }
            reserved += gathered
            if refused { return (bytes.count, .failed(.overloaded(retryAfterSeconds: 2))) }
            self.decoder = decoder
            if decoder.isDone { isComplete = true }
        } else {
            let n = Int(min(Int64(bytes.count), remaining))
            take(UnsafeRawBufferPointer(rebasing: bytes[0..<n]))
            remaining -= Int64(n)
            used = n
            if remaining == 0 { isComplete = true }
        }
        if used > 0 {
            lastProgress = now
            windowBytes += Int64(used)
        }
        if case .stream = mode, !piece.isEmpty { return (used, .pieceReady) }
        return (used, isComplete ? .complete : .needMore)
    }

    private mutating func take(_ run: UnsafeRawBufferPointer) {
        switch mode {
        case .collect: collected.append(contentsOf: run)
        case .stream: piece.append(contentsOf: run)
        case .discard: break
        }
    }

    mutating func takePiece() -> [UInt8] {
        defer { piece = [] }
        return piece
    }

    mutating func takeCollected() -> [UInt8] {
        defer { collected = [] }
        return collected
    }

    /// The body's sink took its piece: the clock starts again from now.
    mutating func resume(now: UInt64) {
        windowStart = now
        windowBytes = 0
        lastProgress = now
    }

    /// When the body must next be judged (a stall, or the end of a rate window).
    func deadline(_ configuration: ServerConfiguration) -> UInt64 {
        let stall = lastProgress + configuration.bodyTimeoutMilliseconds
        guard configuration.bodyMinimumBytesPerSecond > 0 else { return stall }
        return min(stall, windowStart + configuration.bodyRateWindowMilliseconds)
    }

    /// Judges the body at `now`: false when it stalled or brought too little in the window that just ended.
    mutating func isFastEnough(now: UInt64, _ configuration: ServerConfiguration) -> Bool {
        if now >= lastProgress + configuration.bodyTimeoutMilliseconds { return false }
        let window = configuration.bodyRateWindowMilliseconds
        guard configuration.bodyMinimumBytesPerSecond > 0, now >= windowStart + window else { return true }
        let minimum = Int64(configuration.bodyMinimumBytesPerSecond) * Int64(window) / 1000
        if windowBytes < minimum { return false }
        windowStart = now
        windowBytes = 0
        return true
    }
}
