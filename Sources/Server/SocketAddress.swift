import CLinux
import Glibc

/// An IPv4 or IPv6 address and port.
public struct SocketAddress: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    let isIPv6: Bool

    /// Parses an IP literal (`127.0.0.1`, `::1`, `[::1]`) or `localhost`.
    public init?(host: String, port: Int) {
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if literal == "localhost" { literal = "127.0.0.1" }
        guard (0...65535).contains(port) else { return nil }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            isIPv6 = false
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            isIPv6 = true
        } else {
            return nil
        }
        self.host = literal
        self.port = port
    }

    init(host: String, port: Int, isIPv6: Bool) {
        self.host = host
        self.port = port
        self.isIPv6 = isIPv6
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with this address as a `sockaddr`.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        if isIPv6 {
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = UInt16(port).bigEndian
            _ = inet_pton(AF_INET6, host, &sa.sin6_addr)
            return withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = UInt16(port).bigEndian
            _ = inet_pton(AF_INET, host, &sa.sin_addr)
            return withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    /// Reads a `sockaddr_storage` filled by `accept` or `getsockname`.
    static func from(_ storage: inout sockaddr_storage) -> SocketAddress? {
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p -> SocketAddress in
                    var addr = p.pointee.sin_addr
                    var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                    _ = inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
                    return SocketAddress(host: cText(text), port: Int(UInt16(bigEndian: p.pointee.sin_port)), isIPv6: false)
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p -> SocketAddress in
                    var addr = p.pointee.sin6_addr
                    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                    _ = inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
                    return SocketAddress(host: cText(text), port: Int(UInt16(bigEndian: p.pointee.sin6_port)), isIPv6: true)
                }
            }
        default:
            return nil
        }
    }
}

/// A NUL-terminated C string buffer as a String.
private func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Listening sockets.
enum Listener {
    /// A non-blocking listening socket.
    static func open(_ address: SocketAddress, backlog: Int32 = 4096) throws(SystemError) -> Int32 {
        let fd = clinux_socket(address.isIPv6 ? AF_INET6 : AF_INET)
        guard fd >= 0 else { throw SystemError("socket") }
        _ = clinux_reuseaddr(fd)
        if address.isIPv6 { _ = clinux_set_int_option(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        let rc = address.withSockAddr { bind(fd, $0, $1) }
        guard rc == 0 else {
            let error = SystemError("bind \(address)")
            close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = SystemError("listen")
            close(fd)
            throw error
        }
        return fd
    }

    /// The address a socket is bound to (to learn the port picked for port 0).
    static func boundAddress(_ fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        return SocketAddress.from(&storage)
    }
}
