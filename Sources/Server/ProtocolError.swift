public import HTTP

/// A request the engine refuses on its own — malformed, over a limit, too slow, or over the server's memory
/// budget — with the status and reason phrase HTTP gives it. The engine knows no application error format:
/// the `Responder` turns this into its own error body (`errorResponse(for:)`), and the connection closes after it.
public struct ProtocolError: Error, Sendable, Equatable {
    /// What went wrong, for an application that words each case its own way.
    public enum Kind: Sendable, Equatable {
        /// The head or the chunked framing cannot be a valid request (400).
        case malformed
        /// The request line is over the limit (414).
        case requestLineTooLong
        /// The header section is over the limit (431).
        case headersTooLarge
        /// Not HTTP/1.x (505).
        case versionNotSupported
        /// A transfer coding other than chunked (501).
        case notImplemented
        /// The body is larger than the route accepts (413).
        case bodyTooLarge
        /// The body arrives slower than the configured minimum rate, or stopped (408).
        case bodyTooSlow
        /// Buffering the body would pass the server's budget for request bodies (503, with `Retry-After`).
        case overloaded
    }

    public let kind: Kind
    /// The status code to answer with.
    public let status: Int
    /// A sentence for a person: what was wrong with the request.
    public let message: String
    /// Seconds after which the same request may succeed (`Retry-After`), for temporary refusals.
    public let retryAfterSeconds: Int?

    public init(kind: Kind, status: Int, message: String, retryAfterSeconds: Int? = nil) {
        self.kind = kind
        self.status = status
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The reason phrase of `status` (RFC 9110 §15).
    public var reason: String { ResponseHead.reasonPhrase(status) }

    /// The parser's verdict on a head.
    public init(_ error: RequestParseError) {
        let kind: Kind = switch error {
        case .badRequest: .malformed
        case .uriTooLong: .requestLineTooLong
        case .headersTooLarge: .headersTooLarge
        case .versionNotSupported: .versionNotSupported
        case .notImplemented: .notImplemented
        }
        self.init(kind: kind, status: error.status, message: error.message)
    }

    /// A body over the route's limit (declared, or found while decoding chunks).
    public static func bodyTooLarge(limit: Int64?) -> ProtocolError {
        ProtocolError(kind: .bodyTooLarge, status: 413,
                      message: limit.map { "The request body is larger than \($0) bytes." } ?? "The request body is too large.")
    }

    /// Chunked framing that does not decode.
    public static let malformedChunkedBody = ProtocolError(kind: .malformed, status: 400, message: "Malformed chunked body.")

    /// A body slower than the minimum rate (or stalled).
    public static let bodyTooSlow = ProtocolError(kind: .bodyTooSlow, status: 408,
                                                  message: "The request body arrived too slowly.")

    /// No room in the budget for buffered request bodies right now.
    public static func overloaded(retryAfterSeconds: Int) -> ProtocolError {
        ProtocolError(kind: .overloaded, status: 503, message: "The server is holding too many request bodies; try again shortly.",
                      retryAfterSeconds: retryAfterSeconds)
    }
}
