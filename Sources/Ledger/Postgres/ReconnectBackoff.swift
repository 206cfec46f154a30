import Synchronization

/// When to try connecting again after a failure: at once the first time, then after 0.1 s, 0.2 s, ...
/// doubling up to 5 s (scale-out §3: reconnection backoff at most 5 s). While it says wait, callers fail
/// fast instead of each waiting for a connect timeout against a server that is down.
package final class ReconnectBackoff: Sendable {
    private struct State {
        var failures = 0
        var retryAt: ContinuousClock.Instant?
    }

    /// The longest wait between attempts.
    static let maximumDelay: Duration = .seconds(5)

    private let state = Mutex(State())

    /// A backoff with no failure yet: the first attempt may be made at once.
    package init() {}

    /// Whether an attempt may be made now.
    func permitsAttempt() -> Bool {
        state.withLock { state in
            guard let retryAt = state.retryAt else { return true }
            return ContinuousClock.now >= retryAt
        }
    }

    /// The delay before the next attempt after `failures` failures in a row.
    static func delay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        let milliseconds = min(100 << min(failures - 1, 10), 5_000)
        return .milliseconds(milliseconds)
    }

    /// Records a failed attempt and returns how long to wait before the next.
    @discardableResult
    func recordFailure() -> Duration {
        state.withLock { state in
            state.failures += 1
            let delay = Self.delay(afterFailures: state.failures)
            state.retryAt = ContinuousClock.now + delay
            return delay
        }
    }

    /// Records a successful connection: the next failure starts the backoff from the beginning.
    func recordSuccess() {
        state.withLock { $0 = State() }
    }
}
