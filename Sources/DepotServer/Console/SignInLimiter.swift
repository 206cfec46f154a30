import Foundation
import Synchronization

/// Counts wrong admin tokens at sign-in per client address: after `limit` failures within `window` seconds, that
/// address is refused (`429` with `Retry-After`) until the oldest of them is older than the window. Memory is
/// bounded: at most `addressLimit` addresses are tracked (the least recently failing is forgotten first).
final class SignInLimiter: Sendable {
    let limit: Int
    let window: Int64
    let addressLimit: Int
    private let now: @Sendable () -> Int64
    /// Failure times per address, oldest first (at most `limit` each).
    private let failures = Mutex<[String: [Int64]]>([:])

    init(limit: Int = 5, window: Int64 = 60, addressLimit: Int = 10_000,
         now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.limit = limit
        self.window = window
        self.addressLimit = addressLimit
        self.now = now
    }

    /// Seconds `address` must wait before trying again, or nil when it may try now.
    func retryAfter(_ address: String) -> Int? {
        let time = now()
        return failures.withLock { failures -> Int? in
            guard let times = failures[address] else { return nil }
            let recent = times.filter { $0 > time - window }
            failures[address] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return Int(max(1, oldest + window - time))
        }
    }

    /// Records a wrong token from `address`.
    func recordFailure(_ address: String) {
        let time = now()
        failures.withLock { failures in
            if failures[address] == nil, failures.count >= addressLimit {
                failures = failures.filter { ($0.value.last ?? 0) > time - window }
                if failures.count >= addressLimit, let stalest = failures.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) }) {
                    failures[stalest.key] = nil
                }
            }
            var times = (failures[address] ?? []).filter { $0 > time - window }
            times.append(time)
            failures[address] = Array(times.suffix(limit))
        }
    }

    /// How many addresses have failures on record.
    var trackedAddresses: Int { failures.withLock { $0.count } }

    /// The address part of `HOST:PORT` or `[IPv6]:PORT` (one address, whatever port it connects from).
    static func host(of address: String) -> String {
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<end])
        }
        if address.filter({ $0 == ":" }).count == 1, let colon = address.lastIndex(of: ":") {
            return String(address[..<colon])
        }
        return address
    }
}
