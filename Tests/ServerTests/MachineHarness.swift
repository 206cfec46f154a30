import Foundation
import HTTP
import Server

/// A socket that takes at most `capacity` more bytes, then is full until the test gives it room.
struct FakeOutput: ConnectionOutput {
    var capacity = Int.max
    var bytes: [UInt8] = []
    var fileBytes = 0
    /// Calls of `send` that took bytes (one per write the socket would see).
    var writes = 0

    mutating func send(_ buffer: UnsafeRawBufferPointer, more: Bool) -> Int {
        let n = min(buffer.count, capacity)
        guard n > 0 else { return 0 }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        capacity -= n
        writes += 1
        return n
    }

    mutating func sendFile(_ file: OpenFile, offset: Int64, count: Int) -> Int {
        let n = min(count, capacity)
        guard n > 0 else { return 0 }
        fileBytes += n
        capacity -= n
        return n
    }
}

/// Drives one `ConnectionStateMachine` on a manual clock (milliseconds): feeds it events, runs its actions the
/// way the I/O shell does, and records what a socket, the poller and the timer wheel would have seen.
struct MachineHarness {
    var machine: ConnectionStateMachine
    var output = FakeOutput()
    /// The manual clock, in milliseconds.
    var now: UInt64
    var deadline: UInt64 = 0
    var interest = Interest.read
    var later: [@Sendable () async -> Response] = []
    var decisions: [@Sendable () async -> Handling] = []
    var pieces: [[UInt8]] = []
    var aborts = 0
    var halfClosed = false
    var closed = false

    init(environment: ConnectionEnvironment, now: UInt64 = 0) {
        self.now = now
        machine = ConnectionStateMachine(environment: environment, remoteAddress: "127.0.0.1:1", now: .milliseconds(now))
        run()
    }

    /// An environment with `responder` and the test configuration (timeouts in milliseconds).
    static func environment(_ configuration: ServerConfiguration, responder: any Responder = TestResponder(),
                            budget: BodyBudget? = nil) -> ConnectionEnvironment {
        ConnectionEnvironment(configuration: configuration, responder: responder, observer: nil,
                              budget: budget ?? BodyBudget(capacity: configuration.bodyBudgetBytes), loopIndex: 0,
                              dateLine: ConnectionEnvironment.dateLine(forSecond: 1_800_000_000))
    }

    static func configuration(header: UInt64 = 1000, idle: UInt64 = 5000, write: UInt64 = 2000, body: UInt64? = nil,
                              minimumRate: Int = 0, window: UInt64 = 1000, budget: Int = 64 << 20,
                              serverName: String? = "depot") -> ServerConfiguration {
        ServerConfiguration(host: "127.0.0.1", port: 0, loopCount: 1, serverName: serverName, headerTimeoutMilliseconds: header,
                            idleTimeoutMilliseconds: idle, writeTimeoutMilliseconds: write, bodyTimeoutMilliseconds: body,
                            bodyBudgetBytes: budget, bodyMinimumBytesPerSecond: minimumRate, bodyRateWindowMilliseconds: window)
    }

    var time: MonotonicTime { .milliseconds(now) }

    /// Everything written so far, as text.
    var written: String { String(decoding: output.bytes, as: UTF8.self) }

    /// The status codes of the responses written so far, in order.
    var statuses: [Int] {
        written.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    mutating func send(_ text: String) { send(Array(text.utf8)) }

    mutating func send(_ bytes: [UInt8]) {
        precondition(machine.acceptsInput, "the shell would not read now")
        bytes.withUnsafeBytes { machine.received($0, now: time) }
        run()
    }

    /// Moves the clock to `milliseconds`, firing the deadline when it is reached (as the loop's wheel does).
    mutating func advance(to milliseconds: UInt64) {
        now = milliseconds
        if deadline != 0, now >= deadline, !closed {
            machine.deadlinePassed(now: time)
            run()
        }
    }

    /// The socket takes `bytes` more and says it is writable.
    mutating func drain(_ bytes: Int = Int.max) {
        output.capacity = bytes == Int.max ? Int.max : output.capacity + bytes
        machine.writable()
        run()
    }

    mutating func peerCloses() {
        machine.peerClosed(now: time)
        run()
    }

    mutating func replyLater(_ response: Response) {
        machine.replyReady(response, now: time)
        run()
    }

    /// The deferred decision came back as `handling`; false when the machine no longer wanted it.
    @discardableResult
    mutating func decided(_ handling: Handling) -> Bool {
        let wanted = machine.handlingReady(handling, now: time)
        run()
        return wanted
    }

    @discardableResult
    mutating func sinkTookPiece() -> Bool {
        let wanted = machine.sinkTookPiece(now: time)
        run()
        return wanted
    }

    mutating func run() {
        while let action = machine.nextAction() {
            switch action {
            case .flush: machine.flush(to: &output, now: time)
            case .watch(let wanted): interest = wanted
            case .arm(let at): deadline = at
            case .runLater(let work): later.append(work)
            case .decide(let work): decisions.append(work)
            case .consume(_, let piece): pieces.append(piece)
            case .abort: aborts += 1
            case .halfClose: halfClosed = true
            case .close: closed = true
            }
        }
    }
}
