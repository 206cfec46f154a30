import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client for tests that must send exact bytes (malformed requests, pipelining,
/// slow senders) and read exactly what the server answers. Every read has a deadline.
public final class RawHTTPConnection {
    public let fd: Int32

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Connects to `host:port` (IPv4 or IPv6 literal).
    public init(host: String = "127.0.0.1", port: Int) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(result) }
        fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            close(fd)
            throw Failure(description: "connect to \(host):\(port) failed: errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Sends all bytes (ignores EPIPE: the server may have closed already).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Half-closes the sending side.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads whatever arrives within `timeout` seconds (nil on timeout with nothing read, [] on EOF).
    public func readSome(timeout: Double = 5) -> [UInt8]? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, Int32(timeout * 1000))
        guard ready > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { return [] }
        return Array(buffer[0..<n])
    }

    /// Reads until the peer closes or `timeout` passes with no data; returns everything read and whether EOF was seen.
    public func readUntilClose(timeout: Double = 5) -> (bytes: [UInt8], closed: Bool) {
        var all: [UInt8] = []
        while true {
            guard let piece = readSome(timeout: timeout) else { return (all, false) }
            if piece.isEmpty { return (all, true) }
            all.append(contentsOf: piece)
        }
    }

    /// Reads one complete response (head, and a body framed by Content-Length or chunked; none for HEAD/1xx/204/304).
    /// `timeout` is the longest silence allowed; the default is generous because a saturated 2-core CI machine has
    /// kept a plain answer waiting for more than 5 s. Tests that measure promptness pass their own.
    public func readResponse(timeout: Double = 30, isHead: Bool = false) throws -> RawResponse {
        var buffer = pending
        pending = []
        while true {
            if let response = try RawResponse.parse(&buffer, isHead: isHead) {
                pending = buffer
                return response
            }
            guard let piece = readSome(timeout: timeout) else { throw Failure(description: "timed out waiting for a response") }
            if piece.isEmpty {
                throw Failure(description: "connection closed before a complete response (\(buffer.count) bytes: \(String(decoding: buffer.prefix(200), as: UTF8.self)))")
            }
            buffer.append(contentsOf: piece)
        }
    }

    private var pending: [UInt8] = []

    /// Whether the server closed the connection (EOF within `timeout`).
    public func isClosedByPeer(timeout: Double = 5) -> Bool {
        var buffer = pending
        pending = []
        while true {
            guard let piece = readSome(timeout: timeout) else { pending = buffer; return false }
            if piece.isEmpty { return true }
            buffer.append(contentsOf: piece)
        }
    }
}

/// A parsed response as the wire carried it.
public struct RawResponse: Sendable {
    public var status: Int
    public var reason: String
    /// Header fields in order, names as sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The head exactly as received.
    public var rawHead: String

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public func headers(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// Parses one response from the front of `buffer` and removes it; nil when incomplete.
    static func parse(_ buffer: inout [UInt8], isHead: Bool) throws -> RawResponse? {
        guard let end = find([13, 10, 13, 10], in: buffer) else { return nil }
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw RawHTTPConnection.Failure(description: "bad status line: \(statusLine)")
        }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: [],
                                   rawHead: head)
        let bodyStart = end + 4
        if isHead || status < 200 || status == 204 || status == 304 {
            buffer.removeFirst(bodyStart)
            return response
        }
        if let te = response.header("Transfer-Encoding"), te.lowercased().contains("chunked") {
            var i = bodyStart
            var body: [UInt8] = []
            while true {
                guard let lineEnd = find([13, 10], in: buffer, from: i) else { return nil }
                let sizeText = String(decoding: buffer[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw RawHTTPConnection.Failure(description: "bad chunk size")
                }
                i = lineEnd + 2
                if size == 0 {
                    guard let trailerEnd = find([13, 10], in: buffer, from: i) else { return nil }
                    i = trailerEnd + 2
                    break
                }
                guard buffer.count >= i + size + 2 else { return nil }
                body.append(contentsOf: buffer[i..<(i + size)])
                i += size + 2
            }
            response.body = body
            buffer.removeFirst(i)
            return response
        }
        if let lengthText = response.header("Content-Length"), let length = Int(lengthText) {
            guard buffer.count >= bodyStart + length else { return nil }
            response.body = Array(buffer[bodyStart..<(bodyStart + length)])
            buffer.removeFirst(bodyStart + length)
            return response
        }
        // No framing: the body runs to the close; the caller reads until then.
        response.body = Array(buffer[bodyStart...])
        buffer.removeAll()
        return response
    }

    public static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}
