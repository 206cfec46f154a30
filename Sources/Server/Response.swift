import Glibc
public import HTTP
import CLinux

/// An open file shared by the responses that send parts of it; closed when the last one is done.
public final class OpenFile: Sendable {
    public let descriptor: Int32
    /// The file's size when it was opened.
    public let size: Int64
    /// The file's modification time (seconds since 1970).
    public let modificationTime: Int64

    /// Opens a regular file for reading. Returns nil when it does not exist or is not a regular file.
    public static func open(path: String) -> OpenFile? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        return OpenFile(descriptor: fd, size: Int64(info.st_size), modificationTime: Int64(info.st_mtim.tv_sec))
    }

    init(descriptor: Int32, size: Int64, modificationTime: Int64) {
        self.descriptor = descriptor
        self.size = size
        self.modificationTime = modificationTime
    }

    deinit { close(descriptor) }
}

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

/// A response. Header fields are encoded once when `freeze()` is called, so a response kept in memory
/// (a product list) costs no encoding work per request.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPFields {
        didSet { encodedHeaders = nil }
    }
    public var body: ResponseBody
    /// The route label used in metrics (a small fixed set).
    public var route: String
    /// `true` to close the connection after this response.
    public var closeConnection = false
    /// Header bytes encoded by `freeze()`.
    public private(set) var encodedHeaders: [UInt8]?

    public init(status: Int, headers: HTTPFields = HTTPFields(), body: ResponseBody = .empty, route: String = "other") {
        self.status = status
        self.headers = headers
        self.body = body
        self.route = route
    }

    /// Encodes the header fields now, so that sending this response later copies bytes only.
    public mutating func freeze() {
        var out: [UInt8] = []
        ResponseHead.appendFields(headers, to: &out)
        encodedHeaders = out
    }

    /// Whether a body may follow the head (RFC 9110 §6.4.1: never for 1xx, 204, 304).
    public var statusAllowsBody: Bool {
        !(status < 200 || status == 204 || status == 304)
    }
}
