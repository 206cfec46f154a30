import AppStoreSimulator
import ArgumentParsing
import DepotTestSupport
import Foundation
import HTTP
import Testing
import DepotServer

/// Issue 11, missing piece 3 (operations.md §2, scale-out.md §5): JSON log lines with exact field names, times
/// with milliseconds, request IDs echoed in `X-Request-ID` and carried into every line a request causes, and
/// `--trusted-proxies` deciding whose `X-Forwarded-For`, `Forwarded` and `X-Request-ID` are believed.
@Suite("Production logs and request IDs")
struct ProductionLogTests {
    /// Whether `text` is an RFC 3339 UTC time with milliseconds.
    static func isTime(_ text: some StringProtocol) -> Bool {
        String(text).wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil
    }

    /// The JSON objects logged so far (every line must be one).
    static func objects(_ depot: TestDepot) throws -> [[String: Any]] {
        try depot.logs.lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    static func accessLine(_ depot: TestDepot, requestID: String) async throws -> [String: Any]? {
        var found: [String: Any]?
        _ = try await eventually(within: 5) {
            found = try objects(depot).first { $0["event"] as? String == "request" && $0["requestId"] as? String == requestID }
            return found != nil
        }
        return found
    }

    @Test func jsonAccessLinesHaveTheSpecsFieldsAndTheResponsesRequestID() async throws {
        try await withDepot(configure: { $0.logFormat = .json }) { depot in
            let response = try await depot.send("GET", "/products_v1.json?token=secret-in-query")
            let id = try #require(response.header("X-Request-ID"), "every response carries its request ID")
            #expect(RequestIdentifier.isAcceptableRequestID(id))
            let line = try #require(try await Self.accessLine(depot, requestID: id), "\(depot.logs.lines)")
            #expect(Set(line.keys) == ["time", "level", "event", "requestId", "remote", "method", "path", "status", "bytes", "durationMs"])
            #expect(Self.isTime(line["time"] as? String ?? ""), "\(line)")
            #expect(line["level"] as? String == "info")
            #expect(line["method"] as? String == "GET")
            #expect(line["path"] as? String == "/products_v1.json")
            #expect(line["status"] as? Int == 200)
            #expect(line["bytes"] as? Int == response.body.count)
            #expect(line["durationMs"] is NSNumber)
            #expect((line["remote"] as? String)?.hasPrefix("127.0.0.1:") == true)
            // Two requests, two IDs; never the query's token.
            let second = try await depot.send("GET", "/nope")
            #expect(second.header("X-Request-ID") != id)
            #expect(!depot.logs.lines.contains { $0.contains("secret-in-query") })
        }
    }

    @Test func everyLineIsJSONWithATimeAndAnEvent() async throws {
        let tree = TemporaryDirectory("json-log")
        try await TestDepot.copySample(into: tree.path)
        try await withDepot(tree: tree, configure: { $0.logFormat = .json }) { depot in
            // A refused edit logs an error line (not about a request).
            try TreeFiles.replace(depot.catalogDirectory + "/products.json", "{\"products\": [")
            #expect(depot.app.reloadCatalog() == false)
            _ = try await depot.send("GET", "/healthz")
            let objects = try Self.objects(depot)
            #expect(objects.contains { $0["event"] as? String == "catalog_refused" && $0["level"] as? String == "error" })
            for object in objects {
                #expect(Self.isTime(object["time"] as? String ?? ""), "\(object)")
                #expect(["debug", "info", "warning", "error"].contains(object["level"] as? String ?? ""), "\(object)")
                #expect(object["event"] is String, "\(object)")
                if object["event"] as? String != "request" { #expect(object["message"] is String, "\(object)") }
            }
        }
    }

    @Test func textLinesStartWithTheTimeAndCarryTheRequestID() async throws {
        try await withDepot { depot in
            let id = try #require(try await depot.send("GET", "/products_v2.json").header("X-Request-ID"))
            #expect(try await eventually(within: 5) { depot.logRecords.contains { $0.requestID == id && $0.isAccess } }, "\(depot.logs.lines)")
            for line in depot.logs.lines {
                #expect(Self.isTime(line.prefix(24)), "\(line)")
            }
        }
    }

    /// The purchase path logs off the event loop (after Apple answers); its lines carry the request's ID.
    @Test func linesLoggedWhileHandlingAPurchaseCarryItsRequestID() async throws {
        let appStore = try SimulatedAppStore(bundleID: "com.example.depot")
        defer { Task { await appStore.stop() } }
        try await withDepot(configure: {
            $0.logFormat = .json
            $0.appleVerifyURL = appStore.productionURL
            $0.appleSandboxVerifyURL = appStore.sandboxURL
        }) { depot in
            let receipt = appStore.issueReceipt([.init(productID: "com.example.depot.level2", transactionID: "1000000000000777")],
                                                behaviour: .init(httpStatus: 500))
            let body = "{\"receipt\": \"\(receipt)\"}"
            let raw = "POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            let response = try await OffPool.run { try depot.request(raw) }
            #expect(response.status == 503)
            let id = try #require(response.header("X-Request-ID"))
            #expect(try await eventually(within: 5) {
                try Self.objects(depot).contains { $0["event"] as? String == "apple_unavailable" && $0["requestId"] as? String == id }
            }, "\(depot.logs.lines)")
            #expect(try await Self.accessLine(depot, requestID: id)?["status"] as? Int == 503)
            #expect(!depot.logs.lines.contains { $0.contains(receipt) }, "never a receipt in the log")
        }
    }

    // MARK: - Trusted proxies

    @Test func aTrustedProxysRequestIDAndClientAreBelieved() async throws {
        try await withDepot(configure: {
            $0.logFormat = .json
            $0.trustedProxies = [AddressBlock("127.0.0.0/8")!, AddressBlock("10.0.0.0/8")!]
        }) { depot in
            let given = try await depot.send("GET", "/products_v1.json", [("X-Request-ID", "edge-7f3a:1"), ("X-Forwarded-For", "203.0.113.9, 10.1.2.3")])
            #expect(given.header("X-Request-ID") == "edge-7f3a:1")
            let line = try #require(try await Self.accessLine(depot, requestID: "edge-7f3a:1"))
            #expect(line["remote"] as? String == "203.0.113.9", "the first hop that is not a trusted proxy")

            let forwarded = try await depot.send("GET", "/products_v1.json", [("Forwarded", "for=\"[2001:db8::7]:4711\";proto=https, for=10.0.0.2")])
            let id = try #require(forwarded.header("X-Request-ID"))
            #expect(try await Self.accessLine(depot, requestID: id)?["remote"] as? String == "2001:db8::7")

            // Not 1-128 visible ASCII characters: a generated ID instead.
            for bad in ["has space", String(repeating: "x", count: 129), ""] {
                let response = try await depot.send("GET", "/products_v1.json", [("X-Request-ID", bad)])
                let echoed = try #require(response.header("X-Request-ID"))
                #expect(echoed != bad && RequestIdentifier.isAcceptableRequestID(echoed))
            }
            #expect(try await depot.send("GET", "/products_v1.json", [("X-Request-ID", String(repeating: "y", count: 128))])
                .header("X-Request-ID") == String(repeating: "y", count: 128))
        }
    }

    @Test func anUntrustedPeerIsNotBelieved() async throws {
        try await withDepot(configure: {
            $0.logFormat = .json
            $0.trustedProxies = [AddressBlock("10.0.0.0/8")!]
        }) { depot in
            let response = try await depot.send("GET", "/products_v1.json", [("X-Request-ID", "forged-id"), ("X-Forwarded-For", "198.51.100.1")])
            let id = try #require(response.header("X-Request-ID"))
            #expect(id != "forged-id")
            let line = try #require(try await Self.accessLine(depot, requestID: id))
            #expect((line["remote"] as? String)?.hasPrefix("127.0.0.1:") == true, "\(line)")
        }
    }

    @Test func withoutTrustedProxiesNothingForwardedIsBelieved() async throws {
        try await withDepot { depot in
            let response = try await depot.send("GET", "/products_v1.json", [("X-Request-ID", "forged-id"), ("X-Forwarded-For", "198.51.100.1")])
            #expect(response.header("X-Request-ID") != "forged-id")
        }
    }

    // MARK: - Units

    @Test func addressBlocks() throws {
        let block = try #require(AddressBlock("10.1.2.3/8"))
        #expect(block.description == "10.0.0.0/8")
        #expect(block.contains(try #require(IPAddress("10.255.0.1"))))
        #expect(!block.contains(try #require(IPAddress("11.0.0.1"))))
        #expect(block.contains(try #require(IPAddress("::ffff:10.0.0.9"))), "an IPv4-mapped peer is its IPv4 address")
        let v6 = try #require(AddressBlock("2001:db8::/32"))
        let inside = try #require(IPAddress("2001:db8:1::5")), outside = try #require(IPAddress("2001:db9::1"))
        #expect(v6.contains(inside) && !v6.contains(outside))
        let one = try #require(AddressBlock("192.0.2.7"))
        let same = try #require(IPAddress("192.0.2.7")), next = try #require(IPAddress("192.0.2.8"))
        #expect(one.contains(same) && !one.contains(next))
        let everything = try #require(AddressBlock("0.0.0.0/0"))
        let any = try #require(IPAddress("8.8.8.8"))
        #expect(everything.contains(any))
        for bad in ["10.0.0.0/33", "nonsense", "10.0.0/8", "::1/129", "10.0.0.0/x", ""] { #expect(AddressBlock(bad) == nil, "\(bad)") }
        #expect(IPAddress(peer: "[::1]:8080")?.description == "::1")
        #expect(IPAddress(peer: "127.0.0.1:8080")?.description == "127.0.0.1")
        #expect(IPAddress(forwarded: "\"[2001:db8::1]:4711\"")?.description == "2001:db8::1")
        #expect(IPAddress(forwarded: "unknown") == nil && IPAddress(forwarded: "_hidden") == nil)
    }

    @Test func trustedProxiesOptionParsesAndRefuses() throws {
        let parsed = try DepotConfiguration.parse(["--trusted-proxies", "10.0.0.0/8, ::1"], environment: [:])
        #expect(parsed.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1/128"])
        #expect(try DepotConfiguration.parse([], environment: ["DEPOT_TRUSTED_PROXIES": "192.168.0.0/16"]).trustedProxies.count == 1)
        #expect(throws: (any Error).self) { try DepotConfiguration.parse(["--trusted-proxies", "10.0.0.0/99"], environment: [:]) }
        #expect(try DepotConfiguration.parse(["--log-format", "json"], environment: [:]).logFormat == .json)
        #expect(throws: (any Error).self) { try DepotConfiguration.parse(["--log-format", "xml"], environment: [:]) }
    }

    @Test func hopsAreReadFromTheNearestOutward() throws {
        let identifier = RequestIdentifier(trustedProxies: [AddressBlock("10.0.0.0/8")!], loops: 1)
        func client(_ fields: [(String, String)]) -> String? {
            var headers = HTTPFields()
            for (name, value) in fields { headers.append(name, value) }
            return identifier.client(headers, peer: "10.0.0.1:1")
        }
        #expect(client([("X-Forwarded-For", "198.51.100.1, 10.0.0.5")]) == "198.51.100.1")
        #expect(client([("X-Forwarded-For", "6.6.6.6, 198.51.100.1, 10.0.0.5")]) == "198.51.100.1", "a client cannot forge what lies beyond it")
        #expect(client([("X-Forwarded-For", "10.0.0.9")]) == "10.0.0.9")
        #expect(client([("X-Forwarded-For", "unknown, 10.0.0.5")]) == nil)
        #expect(client([("X-Forwarded-For", "1.2.3.4"), ("Forwarded", "for=5.6.7.8")]) == "5.6.7.8", "Forwarded wins")
        #expect(client([]) == nil)
    }

    @Test func timesAndDurations() {
        #expect(LogTimestamp.format(seconds: 1_796_113_800, milliseconds: 123) == "2026-12-01T08:30:00.123Z")
        #expect(LogTimestamp.format(seconds: 0, milliseconds: 5) == "1970-01-01T00:00:00.005Z")
        #expect(Self.isTime(LogTimestamp.now()))
        #expect(LogLine.milliseconds(0.41) == "0.41" && LogLine.milliseconds(12) == "12" && LogLine.milliseconds(1.0004) == "1")
        let line = LogLine.render(format: .json, level: .warning, event: .appleUnavailable, requestID: "r1", message: "a \"quoted\"\nline",
                                  time: "2026-12-01T08:30:00.123Z")
        #expect(line == "{\"time\":\"2026-12-01T08:30:00.123Z\",\"level\":\"warning\",\"event\":\"apple_unavailable\",\"requestId\":\"r1\",\"message\":\"a \\\"quoted\\\"?line\"}")
        #expect(LogLine.render(format: .text, level: .info, event: .lifecycle, requestID: nil, message: "up", time: "T") == "T info up")
    }

    @Test func generatedIDsAreUniqueAcrossLoops() {
        let identifier = RequestIdentifier(trustedProxies: [], loops: 3)
        var seen = Set<String>()
        for loop in 0..<3 { for _ in 0..<100 { seen.insert(identifier.generate(loop: loop)) } }
        #expect(seen.count == 300)
        #expect(seen.allSatisfy { $0.count == 20 && $0.allSatisfy(\.isHexDigit) })
    }
}
