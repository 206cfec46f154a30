import DepotClient
import DepotTestSupport
import Foundation
import HTTP
import Server
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A studio backend on loopback for webhook tests: records every POST (body and `Depot-Signature`), answers
/// with a status the test sets (`200` by default), and can go down and come back on the same port. While it
/// is down the port stays bound (without listening: connections are refused), so that no other socket of a
/// busy test run takes it meanwhile.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let body: Data
        let signature: String
        /// The status it was answered with.
        var status = 200
        /// The decoded event (nil when the body is no event).
        var event: WebhookEvent? { try? JSONDecoder().decode(WebhookEvent.self, from: body) }
    }

    private struct State {
        var server: HTTPServer?
        var deliveries: [Delivery] = []
        var status = 200
        var location: String?
        var body: [UInt8] = []
        var hold: Duration = .zero
        var port = 0
        /// The socket holding the port while the receiver is down (-1: none).
        var placeholder: Int32 = -1
    }

    private let state = Mutex(State())

    init() throws {
        try up(port: 0)
    }

    deinit {
        let placeholder = state.withLock { $0.placeholder }
        if placeholder >= 0 { close(placeholder) }
    }

    /// `http://127.0.0.1:PORT/hooks`.
    var url: URL { URL(string: "http://127.0.0.1:\(state.withLock { $0.port })/hooks")! }

    /// Every POST received so far, in arrival order.
    var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// The status later POSTs are answered with, with a `Location` field and a body when given.
    func answer(_ status: Int, location: String? = nil, body: [UInt8] = []) {
        state.withLock {
            $0.status = status
            $0.location = location
            $0.body = body
        }
    }

    /// Later POSTs are answered only after `duration` (a receiver that is slow to answer).
    func hold(_ duration: Duration) { state.withLock { $0.hold = duration } }

    /// Stops listening (connections are refused until `up()`).
    func down() async {
        guard let server = state.withLock({ state -> HTTPServer? in
            defer { state.server = nil }
            return state.server
        }) else { return }
        let port = state.withLock { $0.port }
        server.stop()
        // The loop closes the listener at once; the placeholder takes the port the moment it can (binding beside a
        // listening socket fails), from a thread of its own. Waiting for the whole server to stop first left the
        // port free for as long as that took (seconds on a loaded machine), and another socket of the run took it:
        // `up()` then failed with "address already in use".
        let placeholder = (try? await OffPool.run { () -> Int32 in
            let deadline = Date().addingTimeInterval(30)
            while true {
                let descriptor = Self.holdPort(port)
                if descriptor >= 0 || Date() >= deadline { return descriptor }
                usleep(1_000)
            }
        }) ?? -1
        state.withLock { $0.placeholder = placeholder }
        await server.stopped()
    }

    /// Listens again on the same port.
    func up() throws { try up(port: state.withLock { $0.port }) }

    /// Waits (polling, without blocking the cooperative pool) until `condition` holds on the deliveries.
    func wait(timeout: Duration = .seconds(90), until condition: ([Delivery]) -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if condition(deliveries) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(deliveries)
    }

    private func up(port: Int) throws {
        let server = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", port: port, loopCount: 1),
                                    responder: Handler(receiver: self))
        let placeholder = state.withLock { state -> Int32 in
            state.server = server
            state.port = server.address.port
            defer { state.placeholder = -1 }
            return state.placeholder
        }
        if placeholder >= 0 { close(placeholder) }
    }

    /// A TCP socket bound to 127.0.0.1:`port` with `SO_REUSEADDR` and not listening (the listener, which sets
    /// it too, can bind beside it); -1 when that fails (the port is then merely free).
    private static func holdPort(_ port: Int) -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
        #else
        return -1
        #endif
    }

    fileprivate func received(_ body: [UInt8], signature: String) -> (Response, Duration) {
        state.withLock { state in
            state.deliveries.append(Delivery(body: Data(body), signature: signature, status: state.status))
            var fields = HTTPFields()
            if let location = state.location { fields.append("Location", location) }
            return (Response(status: state.status, headers: fields, body: state.body.isEmpty ? .empty : .bytes(state.body), route: "hooks"),
                    state.hold)
        }
    }

    private struct Handler: Responder {
        let receiver: WebhookReceiver

        func handle(_ head: RequestHead, context: RequestContext) -> Handling {
            let signature = head.fields.first("Depot-Signature") ?? ""
            return .collectBody(limit: 1 << 20) { body in
                let (response, hold) = receiver.received(body, signature: signature)
                guard hold > .zero else { return .response(response) }
                return .later {
                    try? await Task.sleep(for: hold)
                    return response
                }
            }
        }

        func errorResponse(status: Int, code: String, message: String) -> Response {
            Response(status: status, route: "error")
        }
    }
}
