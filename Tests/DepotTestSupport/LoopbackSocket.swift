#if canImport(Glibc)
import Glibc
#endif
public import Foundation

/// TCP sockets on 127.0.0.1 for the tests' own servers.
public enum LoopbackSocket {
    /// A socket bound to a free loopback port, listening with `backlog` when one is given (a socket bound and
    /// not listening refuses every connection while it lives). The caller owns the descriptor.
    public static func bound(listening backlog: Int32? = nil) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = fd >= 0 && withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound, backlog.map({ listen(fd, $0) == 0 }) ?? true else {
            if fd >= 0 { close(fd) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
