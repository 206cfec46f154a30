public import Foundation

/// The two clocks the client reads, injectable so tests control time.
///
/// - `now` is the wall clock: it turns an HTTP-date `Retry-After` into a delay.
/// - `uptime` is monotonic seconds: it measures transfer rates (never goes back when the user changes the time).
public struct DepotClock: Sendable {
    /// Wall-clock time.
    public var now: @Sendable () -> Date
    /// Monotonic seconds since an arbitrary origin.
    public var uptime: @Sendable () -> TimeInterval

    /// A clock from two closures.
    public init(now: @escaping @Sendable () -> Date, uptime: @escaping @Sendable () -> TimeInterval) {
        self.now = now
        self.uptime = uptime
    }

    /// The system clocks: `Date()` and `ProcessInfo.systemUptime`.
    public static let system = DepotClock(now: { Date() }, uptime: { ProcessInfo.processInfo.systemUptime })
}
