import DepotTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A loopback HTTP/1.1 server that answers the first `answered` requests it reads (on whatever connection,
/// kept alive) with `answer`, then reads every later request head and closes its connection without a byte of
/// answer: a server dropping a kept-alive connection, or a fresh one, unanswered. It counts the request heads
/// it read. Each connection has a thread of its own (blocking sockets never touch Swift's cooperative pool);
/// a request's body (`Content-Length`, as verifyReceipt's POST has) is read and dropped.
final class HangingUpServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let answered: Int
    private let answer: [UInt8]
    private let state = Mutex<(requests: [String], open: [Int32], stopped: Bool)>(([], [], false))

    /// A server answering its first `answered` requests with `answer` (a whole HTTP response).
    init(answered: Int, answer: String) throws {
        self.answered = answered
        self.answer = Array(answer.utf8)
        (listener, port) = try LoopbackSocket.bound(listening: 16)
        Thread { [self] in acceptLoop() }.start()
    }

    /// The request lines read so far (`GET /path HTTP/1.1`), in order.
    var requests: [String] { state.withLock { $0.requests } }

    /// Closes the listener and every open connection.
    func stop() {
        let sockets = state.withLock { s in
            s.stopped = true
            return s.open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let admitted = state.withLock { s in
                if !s.stopped { s.open.append(client) }
                return !s.stopped
            }
            guard admitted else {
                close(client)
                return
            }
            Thread { [self] in
                serve(client)
                state.withLock { $0.open.removeAll { $0 == client } }
                close(client)
            }.start()
        }
    }

    /// Reads request heads off `fd`: answers while the first `answered` are not used up, then returns (the
    /// caller closes the connection) after reading the next one.
    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let end = Array("\r\n\r\n".utf8)
        while true {
            while pending.firstRange(of: end) == nil {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n <= 0 { return }
                pending += buffer[0..<n]
            }
            let head = pending[..<pending.firstRange(of: end)!.lowerBound]
            let line = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
            let length = Self.contentLength(String(decoding: head, as: UTF8.self))
            pending.removeSubrange(..<(head.endIndex + end.count))
            while pending.count < length {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n <= 0 { return }
                pending += buffer[0..<n]
            }
            pending.removeSubrange(..<length)
            let number = state.withLock { s in
                s.requests.append(line)
                return s.requests.count
            }
            guard number <= answered else { return }
            var offset = 0
            while offset < answer.count {
                let written = answer.withUnsafeBytes { send(fd, $0.baseAddress! + offset, answer.count - offset, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// The value of a head's `Content-Length` field (0 without one).
    private static func contentLength(_ head: String) -> Int {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                return Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return 0
    }
}
