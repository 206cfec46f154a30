import Foundation
import Synchronization

/// Final answers kept for a while, and one computation per key at a time: callers asking for a key
/// that is being computed wait for that answer instead of computing it again. `ReceiptVerifier` and
/// `ServerAPIReceiptValidator` keep a minute of answers this way (spec §3, §4.2).
final class SharedResultCache<Value: Sendable>: Sendable {
    private let lifetime: Double
    private let capacity: Int
    private let isCacheable: @Sendable (Value) -> Bool
    private let entries = Mutex<[String: (expires: Date, value: Value)]>([:])
    /// Callers waiting for a computation another caller is running for the same key.
    private let inFlight = Mutex<[String: [CheckedContinuation<Value?, Never>]]>([:])
    private let waitingCount = Atomic<Int>(0)

    /// Keeps values `isCacheable` accepts for `lifetime` seconds, at most `capacity` of them.
    init(lifetime: Double, capacity: Int, isCacheable: @escaping @Sendable (Value) -> Bool) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.isCacheable = isCacheable
    }

    /// The cached value for `key` at `now`, the answer of a computation in flight, or `compute()`'s.
    /// Waiters get the computation's answer, whatever it is; a caller that arrives just after an
    /// uncacheable answer was handed out gets `whenSharedFailed`.
    func value(for key: String, now: Date, whenSharedFailed: @autoclosure () -> Value,
               compute: () async -> Value) async -> Value {
        if let hit = entries.withLock({ $0[key] }), hit.expires > now { return hit.value }
        waitingCount.add(1, ordering: .relaxed)
        defer { waitingCount.subtract(1, ordering: .relaxed) }
        let isFirst = inFlight.withLock { table -> Bool in
            if table[key] != nil { return false }
            table[key] = []
            return true
        }
        guard isFirst else {
            let shared = await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let queued = inFlight.withLock { table -> Bool in
                    guard table[key] != nil else { return false }
                    table[key]!.append(continuation)
                    return true
                }
                if !queued {
                    // The first call finished in between: its answer is cached, unless it was not cacheable.
                    // An expired entry is no answer (the first call's result was not cacheable and an old one remains).
                    if let hit = entries.withLock({ $0[key] }), hit.expires > now { continuation.resume(returning: hit.value) } else {
                        continuation.resume(returning: nil)
                    }
                }
            }
            return shared ?? whenSharedFailed()
        }
        let value = await compute()
        let cacheable = isCacheable(value)
        // Cache first, then release the waiters: a caller arriving in between finds the answer cached.
        if cacheable { store(value, key: key, now: now) }
        let waiters = inFlight.withLock { $0.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter.resume(returning: value) }
        return value
    }

    /// Callers not answered from the cache that wait for an answer now: each computation's caller and those
    /// sharing it.
    var waiting: Int { waitingCount.load(ordering: .relaxed) }

    private func store(_ value: Value, key: String, now: Date) {
        // The same clock as the lookup (`now`), so an injected clock governs both.
        let expires = now.addingTimeInterval(lifetime)
        entries.withLock { table in
            if table.count >= capacity {
                table = table.filter { $0.value.expires > now }
                if table.count >= capacity { table.removeAll() }
            }
            table[key] = (expires, value)
        }
    }
}
