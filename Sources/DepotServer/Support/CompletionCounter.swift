import Synchronization

/// A count of finished jobs that callers can wait on without blocking a thread: `wait(for: n, timeout:)`
/// resumes once `n` increments happened, or after the timeout.
final class CompletionCounter: Sendable {
    private struct State {
        var count = 0
        var nextWaiter = 0
        var waiters: [Int: (target: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        /// Waiters whose timeout fired before they were registered.
        var expired: Set<Int> = []
    }

    private let state = Mutex(State())

    /// The increments so far.
    var count: Int { state.withLock { $0.count } }

    /// One more job finished: wakes the waiters whose target is reached.
    func increment() {
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.count += 1
            let reached = s.waiters.filter { $0.value.target <= s.count }
            for key in reached.keys { s.waiters.removeValue(forKey: key) }
            return reached.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// True once `target` jobs finished; false when `timeout` seconds passed first.
    func wait(for target: Int, timeout: Double) async -> Bool {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            let waiter = state.withLock { s in
                guard let waiter = s.waiters.removeValue(forKey: id) else {
                    s.expired.insert(id)
                    return nil as (target: Int, continuation: CheckedContinuation<Bool, Never>)?
                }
                return waiter
            }
            waiter?.continuation.resume(returning: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { s -> Bool? in
                if s.count >= target { return true }
                if s.expired.remove(id) != nil { return false }
                s.waiters[id] = (target, continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }
}
