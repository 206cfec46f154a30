import Foundation
import Glibc

/// Test hook for crash-safety tests: with `DEPOT_TEST_CRASH_AT=N` in the environment, the process kills
/// itself with SIGKILL at the N-th durable file operation of a publish. Nothing else reads this variable.
struct CrashPoints: Sendable {
    private let target: Int?
    private let counter = Counter()

    final class Counter: @unchecked Sendable {
        // Only touched by the single publishing thread that owns the CrashPoints value.
        var value = 0
    }

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        target = environment["DEPOT_TEST_CRASH_AT"].flatMap { Int($0) }
    }

    /// Marks one step done; dies here if this is the step the test asked for.
    func reached(_ step: String) {
        guard let target else { return }
        counter.value += 1
        if counter.value == target {
            kill(getpid(), SIGKILL)
        }
    }
}
