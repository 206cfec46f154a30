import ArgumentParsing
import DepotTestSupport
import DepotWire
import Foundation
import Testing
import DepotServer

/// Issue 11, missing piece 4 (operations.md §3): `/healthz` is `ok`, `degraded` (200, with reasons) or
/// `unavailable` (503), built from a list of contributors; `--ops-listen` moves `/metrics`, the detailed
/// `/healthz` and `/admin/` to a second listener, and the public port keeps only the status.
@Suite("Health and the ops listener")
struct HealthAndOpsListenerTests {
    static let adminToken = "ops-admin-token-0123456789"

    static func json(_ response: RawResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response.text)")
    }

    static func get(port: Int, _ path: String, _ headers: [(String, String)] = []) async throws -> RawResponse {
        let raw = TestDepot.rawRequest("GET", path, headers)
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(raw)
            return try connection.readResponse()
        }
    }

    static func port(of url: String?) throws -> Int {
        try #require(url.flatMap { URL(string: $0)?.port })
    }

    @Test func okThenDegradedThenOkAgain() async throws {
        let tree = TemporaryDirectory("health-degraded")
        try await TestDepot.copySample(into: tree.path)
        try await withDepot(tree: tree) { depot in
            let ok = try await depot.send("GET", "/healthz")
            #expect(ok.status == 200)
            #expect(try Self.json(ok)["status"] as? String == "ok")
            #expect(try Self.json(ok)["reasons"] == nil, "no reasons when all is well")
            let good = try await depot.send("GET", "/products_v1.json")

            try TreeFiles.replace(depot.catalogDirectory + "/products.json", "{\"products\": 7}")
            #expect(depot.app.reloadCatalog() == false)
            let degraded = try await depot.send("GET", "/healthz")
            #expect(degraded.status == 200, "a failed reload with a good catalog served keeps the instance in rotation")
            let object = try Self.json(degraded)
            #expect(object["status"] as? String == "degraded")
            let reasons = try #require(object["reasons"] as? [String])
            #expect(reasons.count == 1 && reasons[0].contains("last catalog reload failed"), "\(reasons)")
            #expect((object["catalog"] as? [String: Any])?["error"] is String)
            #expect(try await depot.send("GET", "/products_v1.json").body == good.body)

            try TreeFiles.replace(depot.catalogDirectory + "/products.json", SampleCatalog.text)
            #expect(depot.app.reloadCatalog())
            #expect(try Self.json(try await depot.send("GET", "/healthz"))["status"] as? String == "ok")
        }
    }

    @Test func noCatalogEverLoadedIsUnavailable() async throws {
        let tree = TemporaryDirectory("health-none")
        try await TestDepot.copySample(into: tree.path)
        try TreeFiles.replace(tree.path + "/catalog/products.json", "not json")
        try await withDepot(tree: tree) { depot in
            let response = try await depot.send("GET", "/healthz")
            #expect(response.status == 503)
            let object = try Self.json(response)
            #expect(object["status"] as? String == "unavailable")
            #expect((object["reasons"] as? [String])?.first?.hasPrefix("no catalog has loaded") == true, "\(object)")
        }
    }

    /// The contributors combine: one that cannot serve makes the whole `unavailable`, whatever the others say.
    @Test func aLedgerThatCannotBeWrittenIsUnavailable() async throws {
        try await withDepot { depot in
            let check = HealthCheck(contributors: [CatalogHealth(store: depot.app.store), LedgerHealth(writable: { false })])
            let report = await check.report()
            #expect(report.status == HealthReport.unavailable && !report.isServing)
            #expect(report.reasons == ["the ledger cannot be written"])
            #expect(report.ledger == HealthReport.LedgerState(status: "unavailable", backend: "sqlite"))
            let healthy = await HealthCheck(contributors: [CatalogHealth(store: depot.app.store), LedgerHealth(writable: { true })]).report()
            #expect(healthy.status == HealthReport.ok)
            // The running server's own check writes the real ledger.
            let served = try Self.json(try await depot.send("GET", "/healthz"))
            #expect((served["ledger"] as? [String: Any])?["status"] as? String == "ok")
        }
    }

    // MARK: - The ops listener

    @Test func theOpsListenerServesWhatThePublicPortNoLongerDoes() async throws {
        try await withDepot(configure: {
            $0.opsListen = ListenAddress(host: "127.0.0.1", port: 0)
            $0.adminToken = Self.adminToken
        }) { depot in
            let ops = try Self.port(of: depot.app.opsURL)
            #expect(ops != depot.port)

            // Public port: the status only; no metrics, no admin API (not even a 401 that says it exists).
            let brief = try await depot.send("GET", "/healthz")
            #expect(brief.status == 200)
            #expect(brief.text == "{\"status\": \"ok\"}\n")
            #expect(try await depot.send("GET", "/metrics").status == 404)
            #expect(try await depot.send("GET", "/admin/v1/products", [("Authorization", "Bearer \(Self.adminToken)")]).status == 404)
            #expect(try await depot.send("GET", "/admin/v1/products").status == 404)
            #expect(try await depot.send("GET", "/products_v1.json").status == 200, "the public API is still there")

            // Ops listener: detailed health, metrics, the admin API; not the public API.
            let detailed = try Self.json(try await Self.get(port: ops, "/healthz"))
            #expect(detailed["status"] as? String == "ok" && detailed["catalog"] != nil && detailed["disk"] != nil)
            let metrics = try await Self.get(port: ops, "/metrics")
            #expect(metrics.status == 200 && metrics.text.contains("depot_http_requests_total"))
            #expect(try await Self.get(port: ops, "/admin/v1/products").status == 401)
            let products = try await Self.get(port: ops, "/admin/v1/products", [("Authorization", "Bearer \(Self.adminToken)")])
            #expect(products.status == 200 && products.text.contains("com.example.depot.level2"))
            #expect(try await Self.get(port: ops, "/products_v1.json").status == 404)
            #expect(try await Self.get(port: ops, "/v1/packs/level2/manifest").status == 404)
            #expect(try await Self.get(port: ops, "/healthz").header("X-Request-ID") != nil)
        }
    }

    @Test func theOpsListenerWithoutAnAdminTokenHasNoAdminAPI() async throws {
        try await withDepot(configure: { $0.opsListen = ListenAddress(host: "127.0.0.1", port: 0) }) { depot in
            let ops = try Self.port(of: depot.app.opsURL)
            #expect(try await Self.get(port: ops, "/admin/v1/products").status == 404)
            #expect(try await Self.get(port: ops, "/metrics").status == 200)
        }
    }

    @Test func withoutAnOpsListenerThePublicPortHasEverything() async throws {
        try await withDepot { depot in
            #expect(depot.app.opsURL == nil)
            let health = try Self.json(try await depot.send("GET", "/healthz"))
            #expect(health["disk"] != nil)
            #expect(try await depot.send("GET", "/metrics").status == 200)
        }
    }

    @Test func opsListenParsesAndAPortInUseIsAConfigurationError() async throws {
        #expect(ListenAddress("127.0.0.1:9090") == ListenAddress(host: "127.0.0.1", port: 9090))
        #expect(ListenAddress("[::1]:9090") == ListenAddress(host: "::1", port: 9090))
        for bad in ["9090", "host:", ":80", "127.0.0.1:70000", "::1:80"] { #expect(ListenAddress(bad) == nil, "\(bad)") }
        let other = try await TestDepot.start()
        defer { Task { await other.stop() } }
        let tree = TemporaryDirectory("ops-busy")
        try await TestDepot.copySample(into: tree.path)
        await #expect {
            _ = try await TestDepot.start(tree: tree) { $0.opsListen = ListenAddress(host: "127.0.0.1", port: other.port) }
        } throws: { error in
            (error as? ConfigurationError)?.option == "ops-listen"
        }
        // The main listener was given back: the data directory can be served again at once.
        let again = try await TestDepot.start(tree: tree)
        await again.stop()
    }
}
