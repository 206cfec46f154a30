import DepotClient
import Foundation
import HTTP
import Server
import Synchronization

/// A studio backend on loopback for webhook tests: records every POST (body and `Depot-Signature`), answers
/// with a status the test sets (`200` by default), and can go down and come back on the same port.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        let body: Data
        let signature: String
        /// The decoded event (nil when the body is no event).
        var event: WebhookEvent? { try? JSONDecoder().decode(WebhookEvent.self, from: body) }
    }

    private struct State {
        var server: HTTPServer?
        var deliveries: [Delivery] = []
        var status = 200
        var port = 0
    }

    private let state = Mutex(State())

    init() throws {
        try up(port: 0)
    }

    /// `http://127.0.0.1:PORT/hooks`.
    var url: URL { URL(string: "http://127.0.0.1:\(state.withLock { $0.port })/hooks")! }

    /// Every POST received so far, in arrival order.
    var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// The status later POSTs are answered with.
    func answer(_ status: Int) { state.withLock { $0.status = status } }

    /// Stops listening (connections are refused until `up()`).
    func down() async {
        guard let server = state.withLock({ state -> HTTPServer? in
            defer { state.server = nil }
            return state.server
        }) else { return }
        server.stop()
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
        state.withLock {
            $0.server = server
            $0.port = server.address.port
        }
    }

    fileprivate func received(_ body: [UInt8], signature: String) -> Int {
        state.withLock { state in
            state.deliveries.append(Delivery(body: Data(body), signature: signature))
            return state.status
        }
    }

    private struct Handler: Responder {
        let receiver: WebhookReceiver

        func handle(_ head: RequestHead, context: RequestContext) -> Handling {
            let signature = head.fields.first("Depot-Signature") ?? ""
            return .collectBody(limit: 1 << 20) { body in
                let status = receiver.received(body, signature: signature)
                return .response(Response(status: status, route: "hooks"))
            }
        }

        func errorResponse(status: Int, code: String, message: String) -> Response {
            Response(status: status, route: "error")
        }
    }
}
