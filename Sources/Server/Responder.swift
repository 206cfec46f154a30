public import HTTP

/// What the server needs to know about where a request came from.
public struct RequestContext: Sendable {
    /// The peer, as `HOST:PORT`.
    public let remoteAddress: String
    /// Index of the event loop that owns the connection.
    public let loopIndex: Int
}

/// A response now, or one computed off the event loop.
public enum Reply: Sendable {
    case response(Response)
    /// Runs as a Swift task on the engine's `WorkerPool` executor, off the loops; long blocking work still
    /// belongs on a queue of its own (the pool has few threads).
    case later(@Sendable () async -> Response)
}

/// Receives a request body in pieces, with back-pressure: the next piece is not read from the socket
/// until `consume` returns.
public protocol RequestBodySink: AnyObject, Sendable {
    /// Takes the next piece of the body. Throwing stops the upload; `finish` is not called then,
    /// `abort` is (with the error), and the thrown error's response is sent.
    func consume(_ bytes: [UInt8]) async throws(ResponseError)
    /// The whole body arrived.
    func finish() async -> Response
    /// The body will not be completed (client gone, limit, malformed framing, or `consume` threw).
    func abort() async
}

/// An error that carries the response to send.
public struct ResponseError: Error, Sendable {
    public let response: Response
    public init(_ response: Response) { self.response = response }
}

/// How the server should treat a request, decided from its head on the event loop.
public enum Handling: Sendable {
    /// Answer without reading a body (a body that was sent is discarded, or the connection is closed).
    case reply(Reply)
    /// Read the whole body (at most `limit` bytes, else 413), then reply.
    case collectBody(limit: Int, then: @Sendable ([UInt8]) -> Reply)
    /// Stream the body to a sink (at most `limit` bytes, else 413).
    case streamBody(limit: Int64, sink: any RequestBodySink)
    /// Decide off the loop (the decision needs the file system): runs as a Swift task on the engine's `WorkerPool`
    /// executor, like `Reply.later`, and the handling it returns is then taken as if `handle` had returned it.
    /// Until then nothing of the body is read and no `100 Continue` is sent. A sink in a handling that comes back
    /// after the connection ended is aborted, never consumed.
    case decideLater(@Sendable () async -> Handling)
}

/// The application: turns request heads into handling decisions. Called on event-loop threads; must not block.
public protocol Responder: Sendable {
    /// A first look at the head as bytes, before any `String` is made: a response to answer with at once (the
    /// precomputed answers of hot routes), or nil to go on with `handle`. The default is nil.
    func respond(toRaw head: RawRequestHead, context: RequestContext) -> Response?
    func handle(_ head: RequestHead, context: RequestContext) -> Handling
    /// The response for a request the engine refuses on its own (parse failure, body too large or too slow, body
    /// budget exhausted), in the application's error shape. The engine adds `Retry-After` when the error has one
    /// and the response does not, and closes the connection after it.
    func errorResponse(for error: ProtocolError) -> Response
}

extension Responder {
    public func respond(toRaw head: RawRequestHead, context: RequestContext) -> Response? { nil }

    /// Plain text: the reason phrase and the message.
    public func errorResponse(for error: ProtocolError) -> Response {
        var response = Response(status: error.status, body: .bytes(Array("\(error.reason): \(error.message)\n".utf8)), route: "error")
        response.headers.append("Content-Type", "text/plain; charset=utf-8")
        return response
    }
}

/// One exchange whose answer was sent in full, or (`exchangeInterrupted`) whose connection ended while its
/// answer was being sent, reported to the observer on the event loop.
public struct ExchangeRecord: Sendable {
    public let method: HTTPMethod
    public let target: String
    public let status: Int
    public let route: String
    /// Body bytes actually written to the socket: the whole body for a completed exchange, the bytes the kernel
    /// took before the connection ended for an interrupted one (a response whose body is segments is written
    /// in order, so the bytes written are its first `bytesSent` body bytes).
    public let bytesSent: Int64
    public let durationNanoseconds: UInt64
    public let remoteAddress: String
    public let loopIndex: Int
    /// The response's ``Response/requestID`` (nil when the application set none).
    public let requestID: String?
    /// The response's ``Response/clientAddress``, else the peer's address.
    public let clientAddress: String
    /// The response's `tag`.
    public var tag: (any Sendable)? = nil
}

/// Sees every finished exchange (access log, metrics). Called on event-loop threads; must be cheap.
public protocol ServerObserver: Sendable {
    func exchangeCompleted(_ record: ExchangeRecord)
    /// The connection ended (client gone, write timeout, stop) while this exchange's answer was being sent;
    /// `bytesSent` counts the body bytes written. Not called for answers queued behind it, which wrote nothing
    /// of their bodies. The default does nothing.
    func exchangeInterrupted(_ record: ExchangeRecord)
}

extension ServerObserver {
    public func exchangeInterrupted(_ record: ExchangeRecord) {}
}
