import Foundation
import HTTP
import Server
import Synchronization

/// The application the engine tests run: a handful of stub routes that exercise every `Handling`.
///
/// - `GET|HEAD /hello` → `hello\n`
/// - `GET|HEAD /remote` → the peer address (to tell connections apart)
/// - `GET|HEAD /file` → the whole of `file` as a `FileRegion`
/// - `GET|HEAD /status?code=N` → status N with a body (which 204 and 304 must lose)
/// - `GET /later?ms=N&tag=T` → `later T`, computed off the loop after N ms
/// - `GET /gate` → waits, off the loop, until `gate.open()`
/// - `POST /echo` → the collected body (at most `echoLimit` bytes)
/// - `POST /ignore` → `ignored`, without reading the body
/// - `POST /stream` → streams the body into a `CountingSink` (at most `streamLimit` bytes)
/// - `POST /decide?then=stream|refuse` → decided off the loop once `gate.open()`: streams the body into a
///   `CountingSink` as `/stream` does (the sink is made at once), or answers `refused` without reading it
/// - a known path with another method → `405` with `Allow`; anything else → `404`
final class TestResponder: Responder {
    let file: FileRegion?
    let echoLimit: Int
    let streamLimit: Int64
    let gate = Gate()
    /// Makes the sink for each `/stream` request.
    let makeSink: @Sendable () -> CountingSink
    private let state = Mutex(Recorded())

    struct Recorded {
        var remoteAddresses: [String: [String]] = [:]
        var sinks: [CountingSink] = []
        var requests = 0
    }

    init(file: FileRegion? = nil, echoLimit: Int = 64 * 1024, streamLimit: Int64 = 64 << 20,
         makeSink: @escaping @Sendable () -> CountingSink = { CountingSink() }) {
        self.file = file
        self.echoLimit = echoLimit
        self.streamLimit = streamLimit
        self.makeSink = makeSink
    }

    /// Peer addresses of the `/remote` requests, by their `tag` query value.
    func remoteAddresses(tag: String) -> [String] { state.withLock { $0.remoteAddresses[tag] ?? [] } }
    /// Every sink handed out so far.
    var sinks: [CountingSink] { state.withLock { $0.sinks } }
    /// Requests seen so far.
    var requestCount: Int { state.withLock { $0.requests } }

    func handle(_ head: RequestHead, context: RequestContext) -> Handling {
        state.withLock { $0.requests += 1 }
        let target = RequestTarget(head.target)
        let isRead = head.method == .get || head.method == .head
        switch target.path {
        case "/hello":
            guard isRead else { return Self.notAllowed("GET, HEAD") }
            return .reply(.response(Self.text("hello\n")))
        case "/remote":
            guard isRead else { return Self.notAllowed("GET, HEAD") }
            let tag = target.queryValue("tag") ?? ""
            state.withLock { $0.remoteAddresses[tag, default: []].append(context.remoteAddress) }
            return .reply(.response(Self.text(context.remoteAddress)))
        case "/file":
            guard isRead else { return Self.notAllowed("GET, HEAD") }
            guard let file else { return .reply(.response(Response(status: 404))) }
            var response = Response(status: 200, body: .file(file), route: "file")
            response.headers.append("Content-Type", "application/octet-stream")
            return .reply(.response(response))
        case "/status":
            guard isRead else { return Self.notAllowed("GET, HEAD") }
            // A body the status forbids: the engine must not send it.
            let code = Int(target.queryValue("code") ?? "") ?? 200
            return .reply(.response(Response(status: code, body: .bytes(Array("must not be sent".utf8)), route: "status")))
        case "/later":
            guard head.method == .get else { return Self.notAllowed("GET") }
            let milliseconds = min(UInt64(target.queryValue("ms") ?? "") ?? 50, 1000)
            let tag = target.queryValue("tag") ?? ""
            return .reply(.later {
                try? await Task.sleep(nanoseconds: milliseconds * 1_000_000)
                return Self.text("later \(tag)")
            })
        case "/gate":
            guard head.method == .get else { return Self.notAllowed("GET") }
            let gate = self.gate
            return .reply(.later {
                await gate.wait()
                return Self.text("gate opened")
            })
        case "/echo":
            guard head.method == .post else { return Self.notAllowed("POST") }
            return .collectBody(limit: echoLimit) { body in
                var response = Response(status: 200, body: .bytes(body), route: "echo")
                response.headers.append("Content-Type", "application/octet-stream")
                return .response(response)
            }
        case "/ignore":
            guard head.method == .post else { return Self.notAllowed("POST") }
            return .reply(.response(Self.text("ignored")))
        case "/stream":
            guard head.method == .post else { return Self.notAllowed("POST") }
            let sink = makeSink()
            state.withLock { $0.sinks.append(sink) }
            return .streamBody(limit: streamLimit, sink: sink)
        case "/decide":
            guard head.method == .post else { return Self.notAllowed("POST") }
            let (gate, limit, refuse) = (self.gate, streamLimit, target.queryValue("then") == "refuse")
            let sink = makeSink()
            state.withLock { $0.sinks.append(sink) }
            return .decideLater {
                await gate.wait()
                return refuse ? .reply(.response(Self.text("refused"))) : .streamBody(limit: limit, sink: sink)
            }
        default:
            return .reply(.response(Self.error(status: 404, code: "not_found", message: "No such route.")))
        }
    }

    func errorResponse(for error: ProtocolError) -> Response {
        Self.error(status: error.status, code: "\(error.kind)", message: error.message)
    }

    static func error(status: Int, code: String, message: String) -> Response {
        var response = Response(status: status, body: .bytes(Array("{\"error\":\"\(code)\",\"message\":\"\(message)\"}".utf8)),
                                route: "error")
        response.headers.append("Content-Type", "application/json; charset=utf-8")
        return response
    }

    static func text(_ body: String) -> Response {
        var response = Response(status: 200, body: .bytes(Array(body.utf8)), route: "text")
        response.headers.append("Content-Type", "text/plain; charset=utf-8")
        return response
    }

    static func notAllowed(_ allow: String) -> Handling {
        var response = Response(status: 405, body: .bytes(Array("{\"error\":\"method_not_allowed\"}".utf8)), route: "error")
        response.headers.append("Allow", allow)
        return .reply(.response(response))
    }
}

/// A one-shot latch that `.later` routes wait on; counts its waiters so a test knows a request is in flight.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters = 0
        var continuations: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    var waiters: Int { state.withLock { $0.waiters } }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { s -> Bool in
                s.waiters += 1
                if s.isOpen { return true }
                s.continuations.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.isOpen = true
            defer { s.continuations = [] }
            return s.continuations
        }
        for continuation in waiting { continuation.resume() }
    }
}
