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
        (descriptor, port) = try LoopbackSocket.bound()
    }

    deinit { close(descriptor) }

    /// A `verifyReceipt` URL on this port.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/verifyReceipt")! }
}
