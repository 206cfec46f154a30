import ArgumentParsing
import DepotCore
import DepotWire
import DepotTestSupport
import Foundation
import HTTP
import Platform
import Testing
import DepotServer

/// spec §4.6 (`/healthz`, `/metrics`, access log) and §7 (404, 405 with `Allow`, HEAD wherever GET).
@Suite struct OperationsTests {
    static func object(_ response: RawResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    // MARK: - /healthz

    @Test func healthzShape() async throws {
        try await withDepot { depot in
            let freeBefore = try Self.systemFreeBytes(depot.contentDirectory)
            let response = try await depot.send("GET", "/healthz")
            let freeAfter = try Self.systemFreeBytes(depot.contentDirectory)
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            let root = try Self.object(response)
            #expect(root["status"] as? String == "ok")
            let catalog = try #require(root["catalog"] as? [String: Any])
            #expect(catalog["products"] as? Int == 4)
            let updated = try #require(catalog["updated"] as? String)
            let v2 = try await depot.send("GET", ListPath.v2.rawValue)
            #expect(Timestamp.parseRFC3339(updated) == v2.header("Last-Modified").flatMap(HTTPDate.parse))
            let disk = try #require(root["disk"] as? [String: Any])
            let contentFree = try #require(disk["contentFreeBytes"] as? Int64)
            let dataFree = try #require(disk["dataFreeBytes"] as? Int64)
            #expect(contentFree > 0 && dataFree > 0)
            // The figures are the volume's free space, not placeholders: between what the system reported just
            // before and just after the request (other processes fill and free the disk meanwhile, gigabytes in
            // seconds while others build), give or take 256 MiB.
            let slack: Int64 = 256 << 20
            #expect(contentFree >= min(freeBefore, freeAfter) - slack && contentFree <= max(freeBefore, freeAfter) + slack,
                    "\(contentFree) against \(freeBefore) before and \(freeAfter) after")
            // Never cached.
            #expect(response.header("Cache-Control") == "no-store")
        }
    }

    /// The bytes an unprivileged user may still write on the volume holding `path`, from `statvfs(2)`.
    static func systemFreeBytes(_ path: String) throws -> Int64 {
        var info = statvfs()
        try #require(statvfs(path, &info) == 0)
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// The disk figures come from the server's `VolumeSpace`, like the publisher's space checks.
    @Test func healthzDiskFiguresComeFromTheVolume() async throws {
        let depot = try await TestDepot.start(volumeSpace: FixedVolumeSpace(free: 123_456_789, total: 1 << 40))
        defer { Task { await depot.stop() } }
        let response = try await depot.send("GET", "/healthz")
        let disk = try #require(try Self.object(response)["disk"] as? [String: Any])
        #expect(disk["contentFreeBytes"] as? Int64 == 123_456_789)
        #expect(disk["dataFreeBytes"] as? Int64 == 123_456_789)
    }

    @Test func healthzCountsLiveProductsOnly() async throws {
        try await withDepot { depot in
            try TreeFiles.replace(depot.catalogDirectory + "/products.json",
                                  SampleCatalog.text.replacingOccurrences(of: "\"status\": \"live\"\n    },\n    {\n      \"id\": \"com.example.depot.hints30\"",
                                                                          with: "\"status\": \"retired\"\n    },\n    {\n      \"id\": \"com.example.depot.hints30\""))
            #expect(depot.app.reloadCatalog())
            let catalog = try #require(try Self.object(try await depot.send("GET", "/healthz"))["catalog"] as? [String: Any])
            #expect(catalog["products"] as? Int == 3)
        }
    }

    @Test func healthzIs503WithTheSameShapeWhenTheCatalogFailed() async throws {
        let tree = TemporaryDirectory("depot-health")
        try await TestDepot.copySample(into: tree.path)
        try TreeFiles.replace(tree.path + "/catalog/products.json", "{\"products\": [{\"id\": \"x\"}]}")
        try await withDepot(tree: tree) { depot in
            let response = try await depot.send("GET", "/healthz")
            #expect(response.status == 503)
            let root = try Self.object(response)
            #expect(root["status"] as? String != "ok")
            let catalog = try #require(root["catalog"] as? [String: Any])
            #expect(catalog["products"] as? Int == 0)
            #expect((catalog["error"] as? String)?.contains("products[0].type") == true)
            let disk = try #require(root["disk"] as? [String: Any])
            #expect(disk["contentFreeBytes"] is Int64 && disk["dataFreeBytes"] is Int64)
        }
    }

    // MARK: - /metrics

    @Test func metricsExposition() async throws {
        try await withDepot { depot in
            for _ in 0..<3 { _ = try await depot.send("GET", ListPath.v1.rawValue) }
            let etag = try #require(try await depot.send("GET", ListPath.v2.rawValue).header("ETag"))
            _ = try await depot.send("GET", ListPath.v2.rawValue, [("If-None-Match", etag)])
            _ = try await depot.send("GET", "/no/such/route")
            _ = try await depot.send("DELETE", "/healthz")
            // The observer runs after the response is sent: wait (bounded) until the counters show.
            var text = ""
            let counted = try await eventually(within: 2) {
                text = try await depot.send("GET", "/metrics").text
                return text.contains("status=\"405\"") && text.contains("status=\"304\"")
            }
            #expect(counted, "\(text)")
            let response = try await depot.send("GET", "/metrics")
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            text = response.text
            let samples = Self.samples(text)
            #expect((samples["depot_http_requests_total{route=\"products\",status=\"200\"}"] ?? 0) >= 4)
            #expect((samples["depot_http_requests_total{route=\"products\",status=\"304\"}"] ?? 0) >= 1)
            #expect(samples.keys.contains { $0.hasPrefix("depot_http_requests_total{") && $0.contains("status=\"404\"") })
            #expect(samples.keys.contains { $0.hasPrefix("depot_http_requests_total{route=\"healthz\"") && $0.contains("status=\"405\"") })
            #expect((samples["depot_http_response_bytes_total{route=\"products\"}"] ?? 0) > 0)
            // A histogram: cumulative buckets, +Inf equal to the count.
            let buckets = samples.filter { $0.key.hasPrefix("depot_http_request_duration_seconds_bucket{route=\"products\"") }
            #expect(buckets.count >= 5)
            #expect(samples["depot_http_request_duration_seconds_bucket{route=\"products\",le=\"+Inf\"}"]
                == samples["depot_http_request_duration_seconds_count{route=\"products\"}"])
            #expect(samples["depot_http_request_duration_seconds_sum{route=\"products\"}"] != nil)
            #expect(text.contains("# TYPE depot_http_request_duration_seconds histogram"))
            #expect(text.contains("# TYPE depot_http_requests_total counter"))
            #expect(text.contains("# TYPE depot_open_connections gauge"))
            // This very connection is open.
            #expect((samples["depot_open_connections"] ?? 0) >= 1)
            #expect(text.contains("depot_apple_requests_total") || text.contains("depot_apple_request_duration_seconds"))
            // Every non-comment line is `name{labels} value` with a number.
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                #expect(Double(line.split(separator: " ").last ?? "") != nil, "\(line)")
            }
        }
    }

    /// `name{labels}` → value.
    static func samples(_ text: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            result[String(line[..<space])] = value
        }
        return result
    }

    // MARK: - Access log

    @Test func accessLogOneLinePerRequestWithoutQuery() async throws {
        try await withDepot { depot in
            _ = try await depot.send("GET", "/products_v1.json?token=secret-value-1")
            _ = try await depot.send("HEAD", "/products_v2.json")
            _ = try await depot.send("GET", "/v1/packs/level2/manifest?token=secret-value-2")
            _ = try await depot.send("GET", "/v1/packs/level2/1/files/README.txt", [("Authorization", "Bearer secret-value-3")])
            _ = try await depot.send("POST", "/healthz?token=secret-value-4")
            #expect(try await eventually(within: 2) { depot.accessLines.count >= 5 }, "\(depot.logs.lines)")
            let lines = depot.accessLines
            #expect(lines.count == 5, "\(lines)")
            #expect(!depot.logs.lines.contains { $0.contains("secret-value") }, "no token in any log line")
            let pattern = /^(?<remote>127\.0\.0\.1:\d+) (?<method>[A-Z]+) (?<path>\S+) (?<status>\d{3}) (?<bytes>\d+) (?<ms>\d+(\.\d+)?)ms$/
            var seen: [String] = []
            for line in lines {
                let match = try #require(line.wholeMatch(of: pattern), "\(line)")
                seen.append("\(match.method) \(match.path) \(match.status)")
                if match.path == "/products_v1.json" {
                    let body = try await depot.send("GET", "/products_v1.json").body
                    #expect(Int(match.bytes) == body.count)
                }
                if match.method == "HEAD" { #expect(match.bytes == "0") }
            }
            #expect(Set(seen) == [
                "GET /products_v1.json 200", "HEAD /products_v2.json 200", "GET /v1/packs/level2/manifest 401",
                "GET /v1/packs/level2/1/files/README.txt 401", "POST /healthz 405",
            ])
        }
    }

    @Test func accessLogOff() async throws {
        try await withDepot(configure: { $0.accessLog = .off }) { depot in
            _ = try await depot.send("GET", "/products_v1.json")
            _ = try await depot.send("GET", "/nope")
            // Wait for something that is recorded at the same point as the access log: the metrics.
            #expect(try await eventually(within: 2) { try await depot.send("GET", "/metrics").text.contains("status=\"404\"") })
            #expect(depot.accessLines.isEmpty, "\(depot.accessLines)")
        }
    }

    // MARK: - Routes, methods

    struct MethodRow: Sendable, CustomTestStringConvertible {
        let method: String
        let path: String
        var testDescription: String { "\(method) \(path)" }
    }

    static let wrongMethods: [MethodRow] = ["/products_v1.json", "/products_v2.json", "/healthz", "/metrics"].flatMap { path in
        ["POST", "PUT", "DELETE", "PATCH"].map { MethodRow(method: $0, path: path) }
    }

    @Test(arguments: wrongMethods)
    func wrongMethodIs405WithAllow(_ row: MethodRow) async throws {
        try await withDepot { depot in
            let response = try await depot.send(row.method, row.path, [("Content-Length", "0")])
            #expect(response.status == 405)
            let allowed = Set((response.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allowed == ["GET", "HEAD"])
            let error = try #require(try Self.object(response)["error"] as? [String: Any])
            #expect(error["code"] as? String == "method_not_allowed")
            #expect(error["message"] is String)
        }
    }

    @Test(arguments: ["/nope", "/products_v3.json", "/products_v1.json/extra", "/products.json", "/healthz/x", "/v1/unknown", "/PRODUCTS_V1.JSON", "/"])
    func unknownRouteIs404(_ path: String) async throws {
        try await withDepot { depot in
            for method in ["GET", "HEAD", "POST"] {
                let response = try await depot.send(method, path, [("Content-Length", "0")])
                #expect(response.status == 404, "\(method) \(path)")
                #expect(response.header("Content-Type") == "application/json; charset=utf-8")
                if method != "HEAD" {
                    let error = try #require(try Self.object(response)["error"] as? [String: Any])
                    #expect(error["code"] as? String == "not_found")
                }
            }
        }
    }

    @Test(arguments: ["/products_v1.json", "/products_v2.json", "/healthz", "/metrics"])
    func headWhereverGet(_ path: String) async throws {
        try await withDepot { depot in
            let get = try await depot.send("GET", path)
            let bytes = try await depot.sendUntilClose("HEAD", path)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 \(get.status) "))
            #expect(text.hasSuffix("\r\n\r\n"), "no body")
            #expect(text.contains("Content-Type: \(try #require(get.header("Content-Type")))\r\n"))
            #expect(text.contains("Content-Length: "))
            #expect(text.contains("Date: "))
            #expect(text.contains("Server: depot\r\n"))
        }
    }
}
