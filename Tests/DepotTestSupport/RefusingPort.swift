public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that is bound but never listens: connections to it are refused, and no other server
/// can take the port while this value lives (a port merely closed could be reused by a parallel test).
public final class RefusingPort: @unchecked Sendable {
    private let descriptor: Int32
    public let port: Int

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { close(fd) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// A `verifyReceipt` URL on this port.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/verifyReceipt")! }
}
