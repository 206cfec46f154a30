package import DepotWire
import Foundation
package import Ledger
import Server
import Synchronization

/// Prometheus counters and histograms (spec §4.6). Request metrics are sharded per event loop so loops
/// never contend; `/metrics` sums the shards.
public final class Metrics: Sendable {
    /// Upper bounds of the duration buckets, in seconds.
    static let bucketBounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Histogram {
        var buckets = [UInt64](repeating: 0, count: Metrics.bucketBounds.count)
        var count: UInt64 = 0
        var sum: Double = 0

        mutating func observe(_ seconds: Double) {
            for (i, bound) in Metrics.bucketBounds.enumerated() where seconds <= bound { buckets[i] += 1 }
            count += 1
            sum += seconds
        }

        mutating func merge(_ other: Histogram) {
            for i in buckets.indices { buckets[i] += other.buckets[i] }
            count += other.count
            sum += other.sum
        }
    }

    struct RequestKey: Hashable {
        let route: String
        let status: Int
    }

    struct Shard {
        var requests: [RequestKey: UInt64] = [:]
        var bytes: [String: UInt64] = [:]
        var durations: [String: Histogram] = [:]
    }

    final class ShardBox: Sendable {
        let state = Mutex(Shard())
    }

    private let shards: [ShardBox]
    private let apple = Mutex<(outcomes: [String: UInt64], latency: Histogram)>(([:], Histogram()))
    private let appleAPI = Mutex<[APICallKey: UInt64]>([:])
    private let notificationSync = Mutex<(outcomes: [String: UInt64], recovered: UInt64)>(([:], 0))
    /// How many App Store Server API tokens the client signed (set once the client exists).
    private let tokenSignatures = Mutex<(@Sendable () -> Int)?>(nil)
    /// How many receipt validations wait for Apple now (set once the validators exist).
    private let waitingForApple = Mutex<(@Sendable () -> Int)?>(nil)

    struct APICallKey: Hashable {
        let endpoint: String
        let outcome: String
    }
    private let openConnections: @Sendable () -> Int
    private let ledger: Ledger?
    /// Lines that other parts render themselves (the webhook and consumption queues), appended in order.
    private let sections = Mutex<[@Sendable () -> String]>([])

    /// Appends `section`'s lines to every rendering from now on.
    func addSection(_ section: @escaping @Sendable () -> String) {
        sections.withLock { $0.append(section) }
    }

    /// Counters in `shardCount` shards; `openConnections` reads the engine's connection count, `ledger` (when set)
    /// adds its health and propagation lines.
    package init(shardCount: Int, openConnections: @escaping @Sendable () -> Int, ledger: Ledger? = nil) {
        shards = (0..<max(1, shardCount)).map { _ in ShardBox() }
        self.openConnections = openConnections
        self.ledger = ledger
    }

    func recordRequest(route: String, status: Int, bytes: Int64, seconds: Double, shard: Int) {
        shards[shard % shards.count].state.withLock { s in
            s.requests[RequestKey(route: route, status: status), default: 0] += 1
            s.bytes[route, default: 0] += UInt64(max(0, bytes))
            s.durations[route, default: Histogram()].observe(seconds)
        }
    }

    /// One call to Apple, by outcome (`ok`, `timeout`, `http_error`, `unreachable`, `status_21007`, ...).
    package func recordAppleCall(outcome: String, seconds: Double) {
        apple.withLock { a in
            a.outcomes[outcome, default: 0] += 1
            a.latency.observe(seconds)
        }
    }

    /// One exchange with the App Store Server API, by endpoint (`transaction_history`, ...) and outcome
    /// (`http_200`, `http_404_4040010`, `timeout`, `no_answer`, ...); its latency joins the Apple histogram.
    package func recordAppleAPICall(endpoint: String, outcome: String, seconds: Double) {
        appleAPI.withLock { $0[APICallKey(endpoint: endpoint, outcome: outcome), default: 0] += 1 }
        apple.withLock { $0.latency.observe(seconds) }
    }

    /// Reads the number of App Store Server API tokens signed from `count` (the client's issuer).
    func countTokenSignatures(_ count: @escaping @Sendable () -> Int) {
        tokenSignatures.withLock { $0 = count }
    }

    /// Reads the number of receipt validations waiting for Apple from `count` (the validators' shared calls).
    func countWaitingForApple(_ count: @escaping @Sendable () -> Int) {
        waitingForApple.withLock { $0 = count }
    }

    /// One environment's window of the notification catch-up (`ok`, `failed`, `skipped`), and how many
    /// notifications it received for the first time.
    func recordNotificationSync(outcome: String, recovered: Int) {
        notificationSync.withLock { state in
            state.outcomes[outcome, default: 0] += 1
            state.recovered += UInt64(max(0, recovered))
        }
    }

    /// Every loop's request counters summed.
    private func merged() -> Shard {
        var merged = Shard()
        for shard in shards {
            shard.state.withLock { s in
                for (k, v) in s.requests { merged.requests[k, default: 0] += v }
                for (k, v) in s.bytes { merged.bytes[k, default: 0] += v }
                for (k, v) in s.durations { merged.durations[k, default: Histogram()].merge(v) }
            }
        }
        return merged
    }

    /// The counters the console's traffic charts show, since start (the sums of the matching `/metrics` lines).
    package func trafficTotals() -> TrafficCounts {
        let merged = merged()
        var counts = TrafficCounts()
        for (key, value) in merged.requests {
            counts.requests += Int64(value)
            if key.route == "pack_file" && (key.status == 200 || key.status == 206) { counts.downloads += Int64(value) }
            if key.route == "products" {
                counts.listRequests += Int64(value)
                if key.status == 304 { counts.listNotModified += Int64(value) }
            }
        }
        for (route, value) in merged.bytes {
            counts.bytesSent += Int64(value)
            if route == "pack_file" { counts.packBytes += Int64(value) }
        }
        // verifyReceipt outcomes as they are; App Store Server API outcomes summed over endpoints as `api <outcome>`.
        var outcomes = apple.withLock { $0.outcomes }.mapValues { Int64($0) }
        for (key, value) in appleAPI.withLock({ $0 }) { outcomes["api " + key.outcome, default: 0] += Int64(value) }
        counts.apple = outcomes.keys.sorted().map { TrafficCounts.Outcome(outcome: $0, count: outcomes[$0]!) }
        return counts
    }

    /// The text exposition format (version 0.0.4).
    func render() -> String {
        let merged = merged()
        var out = "# HELP depot_http_requests_total HTTP requests answered, by route and status.\n# TYPE depot_http_requests_total counter\n"
        for key in merged.requests.keys.sorted(by: { ($0.route, $0.status) < ($1.route, $1.status) }) {
            out += "depot_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(merged.requests[key]!)\n"
        }
        out += "# HELP depot_http_response_bytes_total Response body bytes sent, by route.\n# TYPE depot_http_response_bytes_total counter\n"
        for route in merged.bytes.keys.sorted() {
            out += "depot_http_response_bytes_total{route=\"\(route)\"} \(merged.bytes[route]!)\n"
        }
        out += "# HELP depot_http_request_duration_seconds Time from request head to the last response byte, by route.\n# TYPE depot_http_request_duration_seconds histogram\n"
        for route in merged.durations.keys.sorted() {
            out += Self.render(histogram: merged.durations[route]!, name: "depot_http_request_duration_seconds", labels: "route=\"\(route)\"")
        }
        let appleState = apple.withLock { $0 }
        out += "# HELP depot_apple_requests_total Calls to Apple's verifyReceipt, by outcome.\n# TYPE depot_apple_requests_total counter\n"
        for outcome in appleState.outcomes.keys.sorted() {
            out += "depot_apple_requests_total{outcome=\"\(outcome)\"} \(appleState.outcomes[outcome]!)\n"
        }
        if let waiting = waitingForApple.withLock({ $0 }) {
            out += "# HELP depot_apple_waiting_requests Receipt validations waiting for Apple now (each call in flight and the identical requests sharing it).\n# TYPE depot_apple_waiting_requests gauge\n"
            out += "depot_apple_waiting_requests \(waiting())\n"
        }
        let apiCalls = appleAPI.withLock { $0 }
        out += "# HELP depot_apple_api_requests_total Calls to the App Store Server API, by endpoint and outcome.\n# TYPE depot_apple_api_requests_total counter\n"
        for key in apiCalls.keys.sorted(by: { ($0.endpoint, $0.outcome) < ($1.endpoint, $1.outcome) }) {
            out += "depot_apple_api_requests_total{endpoint=\"\(key.endpoint)\",outcome=\"\(key.outcome)\"} \(apiCalls[key]!)\n"
        }
        if let signatures = tokenSignatures.withLock({ $0 }) {
            out += "# HELP depot_apple_api_tokens_signed_total App Store Server API tokens signed (each is reused while more than 60 s of it remain).\n# TYPE depot_apple_api_tokens_signed_total counter\n"
            out += "depot_apple_api_tokens_signed_total \(signatures())\n"
        }
        let sync = notificationSync.withLock { $0 }
        out += "# HELP depot_notification_sync_total Notification catch-up windows (one per environment and sync), by outcome.\n# TYPE depot_notification_sync_total counter\n"
        for outcome in Set(["ok", "failed", "skipped"]).union(sync.outcomes.keys).sorted() {
            out += "depot_notification_sync_total{outcome=\"\(outcome)\"} \(sync.outcomes[outcome] ?? 0)\n"
        }
        out += "# HELP depot_notifications_recovered_total Notifications the catch-up received that had not arrived before.\n# TYPE depot_notifications_recovered_total counter\n"
        out += "depot_notifications_recovered_total \(sync.recovered)\n"
        out += "# HELP depot_apple_request_duration_seconds Latency of calls to Apple.\n# TYPE depot_apple_request_duration_seconds histogram\n"
        out += Self.render(histogram: appleState.latency, name: "depot_apple_request_duration_seconds", labels: nil)
        out += "# HELP depot_open_connections Client connections open now.\n# TYPE depot_open_connections gauge\n"
        out += "depot_open_connections \(openConnections())\n"
        if let ledger { out += Self.render(ledger: ledger) }
        for section in sections.withLock({ $0 }) { out += section() }
        return out
    }

    /// The ledger's gauges (scale-out §3) and how other instances' changes reach this one.
    private static func render(ledger: Ledger) -> String {
        let health = ledger.health
        let propagation = ledger.propagation
        var out = "# HELP depot_ledger_up Whether the ledger answers and can be written (1) or not (0).\n# TYPE depot_ledger_up gauge\n"
        out += "depot_ledger_up \(health.up ? 1 : 0)\n"
        out += "# HELP depot_ledger_info The ledger's backend.\n# TYPE depot_ledger_info gauge\n"
        out += "depot_ledger_info{backend=\"\(ledger.backend.rawValue)\"} 1\n"
        let age = max(0, Date().timeIntervalSince(health.lastConfirmed))
        out += "# HELP depot_ledger_state_age_seconds Seconds since the access state was last confirmed current.\n"
        out += "# TYPE depot_ledger_state_age_seconds gauge\ndepot_ledger_state_age_seconds \(age)\n"
        let counters: [(String, String, Int)] = [
            ("polls", "Polls of the shared ledger's change feed.", propagation.polls),
            ("failed_polls", "Polls of the change feed that failed.", propagation.failedPolls),
            ("notifications", "NOTIFY messages from other instances.", propagation.notifications),
            ("refreshed_originals", "Original transactions re-read because an instance changed them.", propagation.refreshedOriginals),
            ("resyncs", "Full reloads of the access state (at start and after each reconnection).", propagation.resyncs),
            ("reconnects", "Reconnections of the change feed.", propagation.reconnects),
        ]
        for (name, help, value) in counters {
            out += "# HELP depot_ledger_feed_\(name)_total \(help)\n# TYPE depot_ledger_feed_\(name)_total counter\n"
            out += "depot_ledger_feed_\(name)_total \(value)\n"
        }
        return out
    }

    private static func render(histogram: Histogram, name: String, labels: String?) -> String {
        var out = ""
        let prefix = labels.map { "\($0)," } ?? ""
        for (i, bound) in bucketBounds.enumerated() {
            out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(histogram.buckets[i])\n"
        }
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(histogram.count)\n"
        let suffix = labels.map { "{\($0)}" } ?? ""
        out += "\(name)_sum\(suffix) \(histogram.sum)\n"
        out += "\(name)_count\(suffix) \(histogram.count)\n"
        return out
    }
}
