import HTTP
import Server
import Synchronization

/// The byte at `offset` of a test body: a pattern that exposes lost, repeated or reordered pieces.
func patternByte(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset % 251) }

/// `count` bytes of the test pattern.
func patternBytes(_ count: Int) -> [UInt8] { (0..<count).map(patternByte) }

/// A streaming body sink that checks every byte against the test pattern, in order, and records how it was called.
final class CountingSink: RequestBodySink {
    struct State {
        var bytes = 0
        var pieces = 0
        var inOrder = true
        var overlapping = false
        var active = false
        var finished = false
        var aborted = false
        /// `abort` was called while a `consume` was still running.
        var abortOverlapped = false
    }

    private let state = Mutex(State())
    /// Each `consume` sleeps this long (to make the engine wait: back-pressure).
    let delayNanoseconds: UInt64
    /// `consume` throws a `422` once this many bytes have arrived.
    let failAfter: Int?

    init(delayNanoseconds: UInt64 = 0, failAfter: Int? = nil) {
        self.delayNanoseconds = delayNanoseconds
        self.failAfter = failAfter
    }

    var snapshot: State { state.withLock { $0 } }

    func consume(_ bytes: [UInt8]) async throws(ResponseError) {
        let start = state.withLock { s -> Int in
            if s.active { s.overlapping = true }
            s.active = true
            return s.bytes
        }
        var inOrder = true
        for (i, byte) in bytes.enumerated() where byte != patternByte(start + i) {
            inOrder = false
            break
        }
        if delayNanoseconds > 0 { try? await Task.sleep(nanoseconds: delayNanoseconds) }
        let total = state.withLock { s -> Int in
            s.bytes += bytes.count
            s.pieces += 1
            s.inOrder = s.inOrder && inOrder
            s.active = false
            return s.bytes
        }
        if let failAfter, total >= failAfter {
            var response = Response(status: 422, body: .bytes(Array("refused".utf8)), route: "stream")
            response.headers.append("Content-Type", "text/plain")
            throw ResponseError(response)
        }
    }

    func finish() async -> Response {
        let s = state.withLock { s -> State in
            s.finished = true
            return s
        }
        return TestResponder.text("bytes=\(s.bytes) inOrder=\(s.inOrder) overlapping=\(s.overlapping)")
    }

    func abort() async {
        state.withLock { s in
            if s.active { s.abortOverlapped = true }
            s.aborted = true
        }
    }
}
