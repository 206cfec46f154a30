public import HTTP

/// A byte range of an open file, sent with `sendfile(2)`.
public struct FileRegion: Sendable {
    public let file: OpenFile
    public let offset: Int64
    public let length: Int64

    public init(file: OpenFile, offset: Int64, length: Int64) {
        self.file = file
        self.offset = offset
        self.length = length
    }
}

/// A piece of a response body.
public enum BodySegment: Sendable {
    case bytes([UInt8])
    case file(FileRegion)

    var length: Int64 {
        switch self {
        case .bytes(let b): Int64(b.count)
        case .file(let r): r.length
        }
    }
}

/// What follows the head of a response: bytes in memory, a file region, or a sequence of both (multipart/byteranges).
public enum ResponseBody: Sendable {
    case empty
    case bytes([UInt8])
    case file(FileRegion)
    case segments([BodySegment])

    /// The exact body length (what `Content-Length` says).
    public var length: Int64 {
        switch self {
        case .empty: 0
        case .bytes(let b): Int64(b.count)
        case .file(let r): r.length
        case .segments(let s): s.reduce(0) { $0 + $1.length }
        }
    }
}

/// A response. `freeze()` encodes its status line, header fields and `Content-Length` once, so a response kept
/// in memory (a product list) is copied out as bytes per request, with no encoding work.
public struct Response: Sendable {
    public var status: Int {
        didSet { encodedHead = nil }
    }
    public var headers: HTTPFields {
        didSet { encodedHead = nil }
    }
    public var body: ResponseBody {
        didSet { encodedHead = nil }
    }
    /// The route label used in metrics (a small fixed set).
    public var route: String
    /// `true` to close the connection after this response.
    public var closeConnection = false
    /// An application value handed back in this exchange's `ExchangeRecord` (what the body carries, say), so
    /// the observer can tell what the bytes actually written were; the engine never looks at it.
    public var tag: (any Sendable)?
    /// Status line, fields and `Content-Length` (when the status allows a body) encoded by `freeze()`; the engine
    /// adds `Server`, `Date`, `Connection: close` when it closes, and the empty line.
    public private(set) var encodedHead: [UInt8]?
    /// The exchange's request ID, set by the application: the engine sends it as `X-Request-ID` (after the frozen
    /// head, so a precomputed response stays precomputed) and reports it in the ``ExchangeRecord``.
    public var requestID: String?
    /// The client's address when the application knows better than the socket's peer (a trusted proxy said who
    /// the client is); reported in the ``ExchangeRecord``.
    public var clientAddress: String?

    public init(status: Int, headers: HTTPFields = HTTPFields(), body: ResponseBody = .empty, route: String = "other") {
        self.status = status
        self.headers = headers
        self.body = body
        self.route = route
    }

    /// Encodes the head now, so that sending this response later copies bytes only.
    public mutating func freeze() {
        var out: [UInt8] = []
        appendHead(to: &out)
        encodedHead = out
    }

    /// Status line, fields and `Content-Length` (when the status allows a body).
    func appendHead(to out: inout [UInt8]) {
        ResponseHead.appendStatusLine(status, to: &out)
        ResponseHead.appendFields(headers, to: &out)
        if statusAllowsBody {
            out.append(contentsOf: Self.contentLengthPrefix)
            ResponseHead.appendDecimal(body.length, to: &out)
            out.append(0x0D); out.append(0x0A)
        }
    }

    private static let contentLengthPrefix = Array("Content-Length: ".utf8)

    /// Whether a body may follow the head (RFC 9110 §6.4.1: never for 1xx, 204, 304).
    public var statusAllowsBody: Bool {
        !(status < 200 || status == 204 || status == 304)
    }
}
