import CLinux
import Glibc

/// A failed system call, with its errno.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32

    /// A failure of `call`, with the calling thread's current `errno`.
    public init(_ call: String) {
        self.init(call, errno: Glibc.errno)
    }

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
