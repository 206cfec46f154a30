public import HTTP

/// How the engine listens, how patient it is, and how much request-body memory it may hold.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Event loops (threads); defaults to one per core.
    public var loopCount: Int
    public var limits: HTTPLimits
    /// The value of the `Server` field on every response (the application's name); nil sends none.
    public var serverName: String?
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
    /// The most bytes of collected request bodies held at once, over all connections (default 64 MiB). A request
    /// whose body would not fit is answered `503` with `Retry-After` before its body is read.
    public var bodyBudgetBytes: Int
    /// The slowest a request body may arrive, in bytes per second, judged over each `bodyRateWindowMilliseconds`
    /// (default 1,024 B/s over 10 s: at least 10 KiB per window until the body is complete); slower is cut with
    /// `408` and the connection closed. 0 turns the check off (the no-progress `bodyTimeout` still applies).
    public var bodyMinimumBytesPerSecond: Int
    /// The window the body rate is judged over.
    public var bodyRateWindowMilliseconds: UInt64
    /// How long a connection closed after an error keeps reading (and dropping) what the client still sends, so
    /// the client reads the answer instead of a reset.
    public var lingerMilliseconds: UInt64

    public init(host: String = "127.0.0.1", port: Int = 8080, loopCount: Int = System.coreCount,
                limits: HTTPLimits = HTTPLimits(), serverName: String? = nil, headerTimeoutMilliseconds: UInt64 = 10_000,
                idleTimeoutMilliseconds: UInt64 = 60_000, writeTimeoutMilliseconds: UInt64 = 60_000,
                bodyTimeoutMilliseconds: UInt64? = nil, shutdownGraceMilliseconds: UInt64 = 10_000,
                bodyBudgetBytes: Int = 64 << 20, bodyMinimumBytesPerSecond: Int = 1024,
                bodyRateWindowMilliseconds: UInt64 = 10_000, lingerMilliseconds: UInt64 = 2000) {
        self.host = host
        self.port = port
        self.loopCount = max(1, loopCount)
        self.limits = limits
        self.serverName = serverName
        self.headerTimeoutMilliseconds = headerTimeoutMilliseconds
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.writeTimeoutMilliseconds = writeTimeoutMilliseconds
        self.bodyTimeoutMilliseconds = bodyTimeoutMilliseconds ?? idleTimeoutMilliseconds
        self.shutdownGraceMilliseconds = shutdownGraceMilliseconds
        self.bodyBudgetBytes = bodyBudgetBytes
        self.bodyMinimumBytesPerSecond = max(0, bodyMinimumBytesPerSecond)
        self.bodyRateWindowMilliseconds = max(1, bodyRateWindowMilliseconds)
        self.lingerMilliseconds = lingerMilliseconds
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
