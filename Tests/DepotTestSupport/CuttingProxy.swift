import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of a server that can drop every connection once a number of bytes went from
/// clients to the server: a network failure in the middle of an upload, on demand. Each connection is pumped
/// by two threads of its own (blocking sockets never touch Swift's cooperative pool).
public final class CuttingProxy: @unchecked Sendable {
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var open: [Int32] = []
    private var armedAfter: Int64?
    private var forwarded: Int64 = 0
    private var cuts = 0
    private var stopped = false

    public init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw Failure(description: "proxy cannot listen: errno \(errno)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Drops every open connection once `bytes` more have gone from clients to the server (once).
    public func cut(afterClientBytes bytes: Int64) {
        lock.lock()
        armedAfter = forwarded + bytes
        lock.unlock()
    }

    /// How many times connections were dropped.
    public var cutCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return cuts
    }

    public func stop() {
        lock.lock()
        stopped = true
        let sockets = open
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            lock.lock()
            if stopped {
                lock.unlock()
                close(client)
                close(server)
                return
            }
            open += [client, server]
            lock.unlock()
            let done = DispatchGroup()
            done.enter()
            done.enter()
            Thread { [self] in pump(from: client, to: server, counted: true); done.leave() }.start()
            Thread { [self] in pump(from: server, to: client, counted: false); done.leave() }.start()
            Thread { [self] in
                done.wait()
                lock.lock()
                open.removeAll { $0 == client || $0 == server }
                lock.unlock()
                close(client)
                close(server)
            }.start()
        }
    }

    private func pump(from source: Int32, to destination: Int32, counted: Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var allowed = buffer.count
            if counted {
                lock.lock()
                if let limit = armedAfter { allowed = Int(max(1, min(Int64(allowed), limit - forwarded))) }
                lock.unlock()
            }
            let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress!, allowed, 0) }
            if n <= 0 { break }
            var offset = 0
            while offset < n {
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, n - offset, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break }
                offset += written
            }
            if counted { countAndMaybeCut(Int64(n)) }
        }
        shutdown(destination, Int32(SHUT_WR))
    }

    private func countAndMaybeCut(_ bytes: Int64) {
        lock.lock()
        forwarded += bytes
        var victims: [Int32] = []
        if let limit = armedAfter, forwarded >= limit {
            armedAfter = nil
            cuts += 1
            victims = open
        }
        lock.unlock()
        for fd in victims { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}
