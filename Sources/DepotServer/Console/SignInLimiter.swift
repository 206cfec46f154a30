import Foundation
import Synchronization

/// Counts wrong admin tokens at sign-in per client address: after `limit` failures within `window` seconds, that
/// address is refused (`429` with `Retry-After`) until the oldest of them is older than the window. Memory is
/// bounded: at most `addressLimit` addresses are tracked (the least recently failing is forgotten first).
package final class SignInLimiter: Sendable {
    let limit: Int
    let window: Int64
    let addressLimit: Int
    private let now: @Sendable () -> Int64

    /// Failure times per address, oldest first (at most `limit` each), and every failure in the order it came
    /// (address and the failure's sequence number; an entry whose address failed again later is stale and
    /// skipped when reached). The least recently failing address is the first live entry of `order`:
    /// forgetting it costs O(1) amortized, not a scan of every address, so failures from ever new addresses
    /// stay cheap when the table is full.
    private struct State {
        struct Record {
            var times: [Int64]
            /// The sequence number of the address's latest failure.
            var latest: UInt64
        }
        var failures: [String: Record] = [:]
        var order: [(address: String, sequence: UInt64)] = []
        var head = 0
        var sequence: UInt64 = 0

        func isLive(_ entry: (address: String, sequence: UInt64)) -> Bool { failures[entry.address]?.latest == entry.sequence }

        /// Drops the least recently failing address; false when none is left.
        mutating func forgetStalest() -> Bool {
            while head < order.count {
                let entry = order[head]
                head += 1
                if isLive(entry) {
                    failures[entry.address] = nil
                    return true
                }
            }
            return false
        }

        /// Drops the consumed front of `order`, and its stale entries once they outnumber the live ones (at most
        /// one live entry per address).
        mutating func compact() {
            if head > 0, head * 2 >= order.count {
                order.removeFirst(head)
                head = 0
            }
            if order.count > 4 * max(16, failures.count) {
                order = order[head...].filter(isLive)
                head = 0
            }
        }
    }

    private let state = Mutex(State())

    /// A limiter allowing `limit` failed sign-ins per address within `window` seconds, tracking at most
    /// `addressLimit` addresses; `now` gives Unix seconds.
    package init(limit: Int = 5, window: Int64 = 60, addressLimit: Int = 10_000,
         now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.limit = limit
        self.window = window
        self.addressLimit = addressLimit
        self.now = now
    }

    /// Seconds `address` must wait before trying again, or nil when it may try now.
    package func retryAfter(_ address: String) -> Int? {
        let time = now()
        return state.withLock { state -> Int? in
            guard let record = state.failures[address] else { return nil }
            let recent = record.times.filter { $0 > time - window }
            state.failures[address] = recent.isEmpty ? nil : State.Record(times: recent, latest: record.latest)
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return Int(max(1, oldest + window - time))
        }
    }

    /// Records a wrong token from `address`.
    package func recordFailure(_ address: String) {
        let time = now()
        state.withLock { state in
            if state.failures[address] == nil {
                while state.failures.count >= addressLimit, state.forgetStalest() {}
            }
            var times = (state.failures[address]?.times ?? []).filter { $0 > time - window }
            times.append(time)
            state.sequence &+= 1
            state.failures[address] = State.Record(times: Array(times.suffix(limit)), latest: state.sequence)
            state.order.append((address, state.sequence))
            state.compact()
        }
    }

    /// How many addresses have failures on record.
    package var trackedAddresses: Int { state.withLock { $0.failures.count } }

    /// Entries kept in the eviction order (tests: bounded by the addresses tracked).
    package var orderEntries: Int { state.withLock { $0.order.count - $0.head } }

    /// The address part of `HOST:PORT` or `[IPv6]:PORT` (one address, whatever port it connects from).
    package static func host(of address: String) -> String {
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<end])
        }
        if address.filter({ $0 == ":" }).count == 1, let colon = address.lastIndex(of: ":") {
            return String(address[..<colon])
        }
        return address
    }
}
