package import DepotClient
package import Foundation
#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif
import Glibc
import Synchronization

/// A lean HTTP/1.1 client for plain `http://` servers (`depot fetch` on Linux): blocking sockets on a
/// thread per request, kept-alive connections reused, each body read straight into its final buffer.
/// swift-corelibs-foundation's URLSession passes every body through libcurl callbacks, several copies and
/// thread hops (about 1 CPU-second per 256 MiB here); this keeps the download engine of `DepotClient` the
/// same and only replaces the wire. `https` goes to the fallback (URLSession).
package final class SocketHTTPExchanger: HTTPExchanger {
    struct Failure: LocalizedError, CustomStringConvertible {
        let description: String
        var errorDescription: String? { description }
    }

    private let idle = Mutex<[String: [Int32]]>([:])
    private let fallback: any HTTPExchanger
    private let timeoutSeconds: Int

    package init(fallback: any HTTPExchanger, timeoutSeconds: Int = 60) {
        self.fallback = fallback
        self.timeoutSeconds = timeoutSeconds
    }

    deinit {
        for fds in idle.withLock({ $0.values }) { for fd in fds { close(fd) } }
    }

    package func exchange(_ request: URLRequest) async throws -> (HTTPURLResponse, Data) {
        guard let url = request.url, url.scheme?.lowercased() == "http", let host = url.host else {
            return try await fallback.exchange(request)
        }
        let port = url.port ?? 80
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try self.perform(request, url: url, host: host, port: port) })
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    private func perform(_ request: URLRequest, url: URL, host: String, port: Int) throws -> (HTTPURLResponse, Data) {
        let key = "\(host):\(port)"
        let head = Self.requestHead(request, url: url, host: host, port: port)
        let body = request.httpBody ?? Data()
        var attempts = 0
        while true {
            let (fd, reused) = try connection(key: key, host: host, port: port)
            do {
                try Self.sendAll(fd, Array(head.utf8) + [UInt8](body))
                let (response, data, keepAlive) = try readResponse(fd, url: url, isHead: request.httpMethod == "HEAD")
                if keepAlive { idle.withLock { $0[key, default: []].append(fd) } } else { close(fd) }
                return (response, data)
            } catch {
                close(fd)
                // A kept-alive connection the server closed meanwhile: try once more on a fresh one.
                if reused && attempts == 0 { attempts += 1; continue }
                throw error
            }
        }
    }

    private func connection(key: String, host: String, port: Int) throws -> (Int32, Bool) {
        if let fd = idle.withLock({ $0[key]?.popLast() }) { return (fd, true) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
            throw Failure(description: "cannot resolve the host name \(host)")
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: code == ECONNREFUSED ? "connection refused to \(host):\(port) (is the server running?)"
                          : "cannot connect to \(host):\(port): \(String(cString: strerror(code)))")
        }
        return (fd, false)
    }

    static func requestHead(_ request: URLRequest, url: URL, host: String, port: Int) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var head = "\(request.httpMethod ?? "GET") \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        for (name, value) in request.allHTTPHeaderFields ?? [:] where name.lowercased() != "host" && name.lowercased() != "content-length" {
            head += "\(name): \(value)\r\n"
        }
        if let body = request.httpBody { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return head
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure(description: "send failed (errno \(errno))") }
            offset += n
        }
    }

    /// Reads the status line, fields and body.
    private func readResponse(_ fd: Int32, url: URL, isHead: Bool) throws -> (HTTPURLResponse, Data, Bool) {
        var buffer = [UInt8]()
        buffer.reserveCapacity(16 * 1024)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var headEnd = -1
        while headEnd < 0 {
            let n = try Self.receive(fd, into: &chunk)
            guard n > 0 else { throw Failure(description: "connection closed before a response") }
            let searchFrom = max(0, buffer.count - 3)
            buffer.append(contentsOf: chunk[0..<n])
            if let end = Self.find([13, 10, 13, 10], in: buffer, from: searchFrom) { headEnd = end }
            if buffer.count > 64 * 1024 && headEnd < 0 { throw Failure(description: "response head too large") }
        }
        let headText = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusParts = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line") }
        var fields: [String: String] = [:]
        var contentLength: Int?
        var chunked = false
        var keepAlive = true
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[name] = fields[name].map { $0 + ", " + value } ?? value
            switch name.lowercased() {
            case "content-length":
                // Digits only (no sign), one value, and no larger than a body this client ever takes.
                guard !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value),
                      contentLength == nil || contentLength == n else {
                    throw Failure(description: "bad Content-Length \"\(value)\"")
                }
                guard n <= Self.maxBody else { throw Failure(description: "response body of \(n) bytes is over the \(Self.maxBody)-byte limit") }
                contentLength = n
            case "transfer-encoding": chunked = value.lowercased().contains("chunked")
            case "connection": if value.lowercased().contains("close") { keepAlive = false }
            default: break
            }
        }
        var leftover = Array(buffer[(headEnd + 4)...])
        var body = Data()
        if isHead || status < 200 || status == 204 || status == 304 {
            // No body.
        } else if chunked {
            body = try readChunked(fd, leftover: &leftover, scratch: &chunk)
        } else if let contentLength {
            // Uninitialized memory: the body is written over in full, so no zero-fill pass.
            if contentLength == 0 {
                body = Data()
            } else {
                guard let memory = malloc(contentLength) else { throw Failure(description: "cannot allocate \(contentLength) bytes") }
                body = Data(bytesNoCopy: memory, count: contentLength, deallocator: .free)
            }
            let initial = min(leftover.count, contentLength)
            body.withUnsafeMutableBytes { out in
                leftover.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: initial) }
            }
            var filled = initial
            try body.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
                while filled < contentLength {
                    let n = recv(fd, out.baseAddress! + filled, contentLength - filled, 0)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { throw Failure(description: "connection closed mid-body") }
                    filled += n
                }
            }
        } else {
            body.append(contentsOf: leftover)
            while true {
                let n = try Self.receive(fd, into: &chunk)
                if n == 0 { break }
                body.append(contentsOf: chunk[0..<n])
                if body.count > Self.maxBody { throw Failure(description: "response body over the \(Self.maxBody)-byte limit") }
            }
            keepAlive = false
        }
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields) else {
            throw Failure(description: "cannot build the response")
        }
        return (response, body, keepAlive)
    }

    private func readChunked(_ fd: Int32, leftover: inout [UInt8], scratch: inout [UInt8]) throws -> Data {
        var body = Data()
        func line() throws -> String {
            while true {
                if let end = Self.find([13, 10], in: leftover, from: 0) {
                    let text = String(decoding: leftover[0..<end], as: UTF8.self)
                    leftover.removeFirst(end + 2)
                    return text
                }
                guard leftover.count <= 64 * 1024 else { throw Failure(description: "chunk-size line too long") }
                let n = try Self.receive(fd, into: &scratch)
                guard n > 0 else { throw Failure(description: "connection closed in a chunked body") }
                leftover.append(contentsOf: scratch[0..<n])
            }
        }
        while true {
            let sizeText = try line().split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? ""
            // Hex digits only (no sign), and the whole body within the limit.
            guard !sizeText.isEmpty, sizeText.utf8.count <= 15, sizeText.utf8.allSatisfy({ ASCIIHex.isDigit($0) }),
                  let size = Int(sizeText, radix: 16), body.count + size <= Self.maxBody else {
                throw Failure(description: "bad chunk size \"\(sizeText)\"")
            }
            if size == 0 {
                while try !line().isEmpty {}
                return body
            }
            while leftover.count < size + 2 {
                let n = try Self.receive(fd, into: &scratch)
                guard n > 0 else { throw Failure(description: "connection closed in a chunk") }
                leftover.append(contentsOf: scratch[0..<n])
            }
            body.append(contentsOf: leftover[0..<size])
            leftover.removeFirst(size + 2)
        }
    }

    /// The largest response body taken: a chunk (at most 1 GiB) or a manifest, with room to spare.
    static let maxBody = 2 << 30

    static func receive(_ fd: Int32, into buffer: inout [UInt8]) throws -> Int {
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw Failure(description: errno == EAGAIN ? "timed out" : "recv failed (errno \(errno))")
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0] {
                var match = true
                for j in 1..<needle.count where haystack[i + j] != needle[j] { match = false; break }
                if match { return i }
            }
            i += 1
        }
        return nil
    }
}

enum ASCIIHex {
    static func isDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }
}
