public import HTTP

/// How the engine listens and how patient it is.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Event loops (threads); defaults to one per core.
    public var loopCount: Int
    public var limits: HTTPLimits
    /// Time to receive a request head, from its first byte (or from accept).
    public var headerTimeoutMilliseconds: UInt64
    /// Time a keep-alive connection may sit idle between requests.
    public var idleTimeoutMilliseconds: UInt64
    /// Time a response may make no progress because the client stopped reading.
    public var writeTimeoutMilliseconds: UInt64
    /// Time a request body may make no progress.
    public var bodyTimeoutMilliseconds: UInt64
    /// How long in-flight requests may take to finish after a stop was asked for.
    public var shutdownGraceMilliseconds: UInt64

    public init(host: String = "127.0.0.1", port: Int = 8080, loopCount: Int = System.coreCount,
                limits: HTTPLimits = HTTPLimits(), headerTimeoutMilliseconds: UInt64 = 10_000,
                idleTimeoutMilliseconds: UInt64 = 60_000, writeTimeoutMilliseconds: UInt64 = 60_000,
                bodyTimeoutMilliseconds: UInt64? = nil, shutdownGraceMilliseconds: UInt64 = 10_000) {
        self.host = host
        self.port = port
        self.loopCount = max(1, loopCount)
        self.limits = limits
        self.headerTimeoutMilliseconds = headerTimeoutMilliseconds
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.writeTimeoutMilliseconds = writeTimeoutMilliseconds
        self.bodyTimeoutMilliseconds = bodyTimeoutMilliseconds ?? idleTimeoutMilliseconds
        self.shutdownGraceMilliseconds = shutdownGraceMilliseconds
    }
}

/// Facts about the machine.
public enum System {
    /// Online processors.
    public static var coreCount: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return n > 0 ? n : 1
    }
}

#if canImport(Glibc)
import Glibc
#endif
