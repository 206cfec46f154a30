#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The parsed head of a request: request line and header fields, with the framing facts derived from them.
public struct RequestHead: Sendable {
    public var method: HTTPMethod
    /// The request-target as sent (origin-form after stripping an absolute-form's scheme and authority).
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    public var fields: HTTPFields
    /// How the body is delimited (RFC 9112 §6.3).
    public var framing: BodyFraming
    /// Whether the connection may stay open after this exchange.
    public var keepAlive: Bool
    /// `Expect: 100-continue` was sent.
    public var expectsContinue: Bool

    public init(method: HTTPMethod, target: String, minorVersion: Int = 1, fields: HTTPFields = HTTPFields(),
                framing: BodyFraming = .none, keepAlive: Bool = true, expectsContinue: Bool = false) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.fields = fields
        self.framing = framing
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }

    /// The path part of the target (before `?`), undecoded.
    public var path: Substring {
        if let q = target.utf8.firstIndex(of: UInt8(ascii: "?")) { return target[..<q] }
        return target[...]
    }

    /// Whether the path (before any `?`) is exactly `literal`, compared as bytes.
    public func pathIs(_ literal: StaticString) -> Bool {
        var target = target
        return target.withUTF8 { bytes in
            let n = literal.utf8CodeUnitCount
            guard bytes.count >= n, bytes.count == n || bytes[n] == UInt8(ascii: "?") else { return false }
            return memcmp(bytes.baseAddress!, literal.utf8Start, n) == 0
        }
    }
}

/// How a request body is delimited.
public enum BodyFraming: Sendable, Equatable {
    case none
    case contentLength(Int64)
    case chunked

    public var hasBody: Bool {
        switch self {
        case .none: false
        case .contentLength(let n): n > 0
        case .chunked: true
        }
    }
}

/// Limits the parser enforces (spec §7).
public struct HTTPLimits: Sendable {
    /// Longest request line, excluding its CRLF (`414` beyond).
    public var maxRequestLineBytes = 8 * 1024
    /// Largest header field section, from after the request line to the empty line (`431` beyond).
    public var maxHeaderBytes = 32 * 1024
    /// Most header fields (`431` beyond).
    public var maxHeaderCount = 100

    public init() {}
}

/// Why a request could not be parsed; each maps to one status code, after which the connection closes.
public enum RequestParseError: Error, Equatable, Sendable {
    case badRequest(String)
    case uriTooLong
    case headersTooLarge
    case versionNotSupported
    case notImplemented(String)

    public var status: Int {
        switch self {
        case .badRequest: 400
        case .uriTooLong: 414
        case .headersTooLarge: 431
        case .versionNotSupported: 505
        case .notImplemented: 501
        }
    }

    public var message: String {
        switch self {
        case .badRequest(let why): why
        case .uriTooLong: "The request line is longer than 8 KiB."
        case .headersTooLarge: "The header section is larger than 32 KiB or has more than 100 fields."
        case .versionNotSupported: "Only HTTP/1.0 and HTTP/1.1 are supported."
        case .notImplemented(let why): why
        }
    }
}
