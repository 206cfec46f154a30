import HTTP
import Server

/// Who a request is from and what it is called in the logs: its request ID (sent back as `X-Request-ID`) and the
/// client's address (operations.md §2, scale-out.md §5).
package struct RequestIdentity: Sendable {
    let requestID: String
    /// The client: the socket's peer, or what a trusted proxy said.
    let clientAddress: String
    /// Whether the client reached Depot over TLS: a trusted proxy said so (`X-Forwarded-Proto: https` or
    /// `Forwarded: proto=https`). The console's cookie is then `Secure`.
    var secureTransport = false

    /// Marks a response as this request's.
    func stamp(_ response: Response) -> Response {
        var response = response
        response.requestID = requestID
        response.clientAddress = clientAddress
        return response
    }

    /// The same handling, with every response it leads to stamped (also those computed later, off the loop).
    func stamp(_ handling: Handling) -> Handling {
        switch handling {
        case .reply(let reply):
            return .reply(stamp(reply))
        case .collectBody(let limit, let then):
            return .collectBody(limit: limit) { body in stamp(then(body)) }
        case .streamBody(let limit, let sink):
            return .streamBody(limit: limit, sink: StampingBodySink(inner: sink, identity: self))
        case .decideLater(let work):
            return .decideLater { stamp(await work()) }
        }
    }

    func stamp(_ reply: Reply) -> Reply {
        switch reply {
        case .response(let response):
            return .response(stamp(response))
        case .later(let work):
            return .later { stamp(await work()) }
        }
    }
}

/// A body sink whose answers (the final one and a refusal) carry the request's identity.
final class StampingBodySink: RequestBodySink {
    let inner: any RequestBodySink
    let identity: RequestIdentity

    init(inner: any RequestBodySink, identity: RequestIdentity) {
        self.inner = inner
        self.identity = identity
    }

    func consume(_ bytes: [UInt8]) async throws(ResponseError) {
        do {
            try await inner.consume(bytes)
        } catch {
            throw ResponseError(identity.stamp(error.response))
        }
    }

    func finish() async -> Response { identity.stamp(await inner.finish()) }

    func abort() async { await inner.abort() }
}
