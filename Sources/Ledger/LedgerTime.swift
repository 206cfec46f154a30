package import Foundation

/// The ledger's unit of time: integer milliseconds since 1970, the App Store's own precision.
package enum LedgerTime {
    /// Milliseconds since 1970, clamped to what a 64-bit integer column holds (never traps on absurd dates).
    package static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return value > 0 ? .max : .min }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }

    /// The date `milliseconds` after 1970.
    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
