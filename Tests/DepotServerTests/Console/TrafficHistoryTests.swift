import DepotServer
import DepotTestSupport
import DepotWire
import Foundation
import Synchronization
import Testing

/// Issue 16: the per-minute traffic ring behind the console's charts, and its admin endpoint.
@Suite("Console: traffic history")
struct TrafficHistoryTests {
    @Test func minutesAreDifferencesOfSnapshotsAndTheRingKeepsADay() {
        let clock = Mutex<Int64>(6_000_030)
        let counts = Mutex(TrafficCounts())
        let history = TrafficHistory(totals: { counts.withLock { $0 } }, now: { clock.withLock { $0 } })
        for minute in 1...1500 {
            counts.withLock {
                $0.requests += Int64(minute)
                $0.downloads += 1
                $0.apple = [TrafficCounts.Outcome(outcome: "ok", count: Int64(minute))]
            }
            clock.withLock { $0 = 6_000_000 + Int64(minute) * 60 }
            history.sample()
        }
        counts.withLock { $0.requests += 7 }
        let report = history.report(disk: TrafficReport.Disk(contentFreeBytes: 1, contentTotalBytes: 2, contentReserveBytes: 1, dataFreeBytes: 1))
        #expect(report.minutes.count == 1440)
        #expect(report.minutes.last?.counts.requests == 1500 && report.minutes.first?.counts.requests == 61)
        #expect(report.minutes.allSatisfy { $0.counts.downloads == 1 })
        #expect(report.minutes.last?.counts.apple == [TrafficCounts.Outcome(outcome: "ok", count: 1)])
        #expect(report.current.counts.requests == 7)
        #expect(report.current.start == Timestamp.rfc3339(6_000_000 + 1500 * 60))
        #expect(report.totals.requests == Int64((1...1500).reduce(0, +)) + 7)
        // A second sample within the same minute does not make a new minute.
        history.sample()
        #expect(history.report(disk: report.disk).minutes.count == 1440)
    }

    /// The charts' Apple calls count both ways of asking Apple: `verifyReceipt` and the App Store Server API.
    @Test func appleCallsCountVerifyReceiptAndTheServerAPI() {
        let metrics = Metrics(shardCount: 1, openConnections: { 0 })
        metrics.recordAppleCall(outcome: "status_0", seconds: 0.1)
        metrics.recordAppleAPICall(endpoint: "transaction_history", outcome: "http_200", seconds: 0.1)
        metrics.recordAppleAPICall(endpoint: "transaction_info", outcome: "http_200", seconds: 0.1)
        metrics.recordAppleAPICall(endpoint: "transaction_info", outcome: "timeout", seconds: 0.1)
        #expect(metrics.trafficTotals().apple == [
            TrafficCounts.Outcome(outcome: "api http_200", count: 2),
            TrafficCounts.Outcome(outcome: "api timeout", count: 1),
            TrafficCounts.Outcome(outcome: "status_0", count: 1),
        ])
    }

    @Test func theEndpointAgreesWithMetrics() async throws {
        let depot = try await TestDepot.start { $0.adminToken = ConsoleSignInTests.adminToken }
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        for _ in 0..<3 { _ = try await http.send("GET", "/products_v1.json") }
        let etag = try await http.send("GET", "/products_v1.json").header("ETag") ?? ""
        _ = try await http.send("GET", "/products_v1.json", [("If-None-Match", etag)])
        let token = try OperatorTokens.issue(pack: "level2", ttl: 600, account: nil, secret: "test-secret-test-secret-test-secret-0123", dataDirectory: depot.dataDirectory)
        let manifest = try await http.send("GET", "/v1/packs/level2/1/manifest", [("Authorization", "Bearer \(token)")])
        let files = (ConsoleHTTP.json(manifest)["files"] as? [[String: Any]]) ?? []
        for file in files { _ = try await http.send("GET", file["url"] as? String ?? "", [("Authorization", "Bearer \(token)")]) }
        let response = try await http.send("GET", "/admin/v1/traffic", [ResumableUploadTests.bearer])
        #expect(response.status == 200)
        let report = try WireJSON.decode(TrafficReport.self, from: response.body)
        let metrics = try await http.send("GET", "/metrics").text
        func sum(_ prefix: String, where keep: (String) -> Bool = { _ in true }) -> Int64 {
            metrics.split(separator: "\n").filter { $0.hasPrefix(prefix) && keep(String($0)) }
                .compactMap { Int64($0.split(separator: " ").last ?? "") }.reduce(0, +)
        }
        #expect(report.totals.downloads == Int64(files.count) && files.count > 0)
        #expect(report.totals.downloads == sum("depot_http_requests_total{route=\"pack_file\"", where: { $0.contains("status=\"200\"") || $0.contains("status=\"206\"") }))
        #expect(report.totals.packBytes == sum("depot_http_response_bytes_total{route=\"pack_file\"}"))
        #expect(report.totals.listRequests == 5 && report.totals.listNotModified == 1)
        #expect(report.totals.listRequests == sum("depot_http_requests_total{route=\"products\""))
        // /metrics counted the traffic request itself once it was answered.
        #expect(report.totals.requests + 1 == sum("depot_http_requests_total{"))
        #expect(report.disk.contentFreeBytes > 0 && report.disk.contentReserveBytes > 0 && report.disk.contentTotalBytes >= report.disk.contentFreeBytes)
        // Everything since start sits in the minutes kept plus the minute under way.
        let kept = report.minutes.map(\.counts.requests).reduce(0, +) + report.current.counts.requests
        #expect(kept == report.totals.requests)
    }
}
