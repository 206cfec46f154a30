import HTTP

/// A point on the monotonic clock. Deadlines are kept in milliseconds; exchange durations in nanoseconds.
package struct MonotonicTime: Sendable, Comparable {
    package var nanoseconds: UInt64

    package init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    package static func milliseconds(_ value: UInt64) -> MonotonicTime { MonotonicTime(nanoseconds: value * 1_000_000) }

    package var milliseconds: UInt64 { nanoseconds / 1_000_000 }

    package static func < (a: MonotonicTime, b: MonotonicTime) -> Bool { a.nanoseconds < b.nanoseconds }
}

/// What the connections of one loop share: the configuration, the application, the memory budget, the `Date`
/// line of the current second and whether the server is stopping.
///
/// `@unchecked Sendable`: the mutable properties (`dateLine`, `stopping`) are written and read only on the
/// loop's own thread.
package final class ConnectionEnvironment: @unchecked Sendable {
    let configuration: ServerConfiguration
    let responder: any Responder
    let observer: (any ServerObserver)?
    let budget: BodyBudget
    let loopIndex: Int
    /// `Server: <name>\r\n`, or nothing.
    let serverLine: [UInt8]
    /// `Date: <IMF-fixdate>\r\n` of the current second.
    package var dateLine: [UInt8]
    /// The server is stopping: every response closes its connection.
    package var stopping = false

    package init(configuration: ServerConfiguration, responder: any Responder, observer: (any ServerObserver)?,
                 budget: BodyBudget, loopIndex: Int, dateLine: [UInt8]) {
        self.configuration = configuration
        self.responder = responder
        self.observer = observer
        self.budget = budget
        self.loopIndex = loopIndex
        self.serverLine = configuration.serverName.map { Array("Server: \($0)\r\n".utf8) } ?? []
        self.dateLine = dateLine
    }

    /// `Date: …\r\n` for a wall-clock second.
    package static func dateLine(forSecond second: Int64) -> [UInt8] {
        Array("Date: \(HTTPDate.format(second))\r\n".utf8)
    }
}
