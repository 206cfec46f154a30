/// When to try again after a failed attempt: `base · 2^(attempt − 1)` seconds, at most `maximum`.
package struct RetrySchedule: Sendable {
    /// The delay after the first failure, seconds.
    var base: Double
    /// The longest delay, seconds.
    var maximum: Double

    /// `base` seconds after the first failure, doubling up to `maximum` seconds.
    package init(base: Double, maximum: Double) {
        self.base = base
        self.maximum = maximum
    }

    /// The webhooks' schedule: 1 s, 2 s, 4 s, … up to 10 minutes (for 24 hours: about 150 attempts).
    package static let webhooks = RetrySchedule(base: 1, maximum: 600)
    /// The consumption answers' schedule: 5 s, 10 s, … up to 10 minutes (for 12 hours).
    static let consumption = RetrySchedule(base: 5, maximum: 600)

    /// The delay after `failures` failed attempts (1 for the first).
    func delay(afterFailures failures: Int) -> Double {
        let exponent = Double(min(max(failures, 1) - 1, 40))
        return min(maximum, base * Double(sign: .plus, exponent: Int(exponent), significand: 1))
    }
}
