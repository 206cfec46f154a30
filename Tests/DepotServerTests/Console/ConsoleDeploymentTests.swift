import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Issue 16: where the console is served (the ops listener when there is one), the `Secure` cookie behind a
/// trusted TLS proxy, and the admin verbs the console added (product text, a version's chunking).
@Suite("Console: ops listener, proxies, product text")
struct ConsoleDeploymentTests {
    static let adminToken = ConsoleSignInTests.adminToken
    static let bearer = ("Authorization", "Bearer \(ConsoleSignInTests.adminToken)")

    @Test func theConsoleIsOnTheOpsListenerOnlyWhenThereIsOne() async throws {
        let depot = try await TestDepot.start {
            $0.adminToken = Self.adminToken
            $0.opsListen = ListenAddress(host: "127.0.0.1", port: 0)
        }
        defer { Task { await depot.stop() } }
        let publicPort = ConsoleHTTP(port: depot.port)
        let opsURL = try #require(depot.app.opsURL)
        let ops = ConsoleHTTP(port: try #require(Int(opsURL.split(separator: ":").last ?? "")))
        for path in ["/admin/", "/admin/console/app.js", "/admin/session", "/admin/v1/traffic"] {
            #expect(try await publicPort.send("GET", path, [Self.bearer]).status == 404, "\(path) on the public port")
        }
        #expect(try await ops.send("GET", "/admin/").status == 200)
        #expect(try await ops.send("GET", "/admin/console/app.js").status == 200)
        let (cookie, csrf, _) = try await ConsoleSignInTests.signIn(ops)
        #expect(try await ops.send("GET", "/admin/v1/traffic", [("Cookie", cookie)]).status == 200)
        #expect(try await ops.send("GET", "/admin/v1/packs", [("Cookie", cookie)]).status == 200)
        // Promote and rollback are served there too (a refusal from the verb, not a 404 from the listener).
        let rollback = try await ops.send("POST", "/admin/v1/packs/level2/rollback", [("Cookie", cookie), ("X-CSRF-Token", csrf)])
        #expect(ConsoleHTTP.errorCode(rollback) != nil && !rollback.text.contains("No such resource."), "\(rollback.text)")
        let promote = try await ops.send("POST", "/admin/v1/packs/level2/1/promote", [("Cookie", cookie), ("X-CSRF-Token", csrf)])
        #expect(promote.status == 200, "\(promote.text)")
    }

    @Test func theCookieIsSecureWhenATrustedProxySaysTLS() async throws {
        let depot = try await TestDepot.start {
            $0.adminToken = Self.adminToken
            $0.trustedProxies = [AddressBlock("127.0.0.0/8")!]
        }
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let body = Array("{\"token\": \"\(Self.adminToken)\"}".utf8)
        for (header, secure) in [(("X-Forwarded-Proto", "https"), true), (("Forwarded", "for=203.0.113.9;proto=https"), true),
                                 (("X-Forwarded-Proto", "http"), false)] {
            let response = try await http.send("POST", "/admin/session", [("Content-Type", "application/json"), header], body: body)
            #expect(response.status == 200)
            #expect((response.header("Set-Cookie") ?? "").hasSuffix("; Secure") == secure, "\(header)")
        }
        // An untrusted peer is not believed.
        let untrusted = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await untrusted.stop() } }
        let response = try await ConsoleHTTP(port: untrusted.port).send("POST", "/admin/session",
                                                                        [("Content-Type", "application/json"), ("X-Forwarded-Proto", "https")], body: body)
        #expect(response.status == 200 && !(response.header("Set-Cookie") ?? "").contains("Secure"))
        // The limiter counts the client a trusted proxy names: another client behind the same proxy is not locked out.
        let wrong = Array("{\"token\": \"wrong-token-wrong-token\"}".utf8)
        for _ in 0..<5 {
            _ = try await http.send("POST", "/admin/session", [("Content-Type", "application/json"), ("X-Forwarded-For", "198.51.100.7")], body: wrong)
        }
        let locked = try await http.send("POST", "/admin/session", [("Content-Type", "application/json"), ("X-Forwarded-For", "198.51.100.7")], body: body)
        #expect(locked.status == 429)
        let other = try await http.send("POST", "/admin/session", [("Content-Type", "application/json"), ("X-Forwarded-For", "198.51.100.8")], body: body)
        #expect(other.status == 200)
    }

    @Test func aProductsTextIsEditedAndTheListsFollow() async throws {
        let depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let path = "/admin/v1/products/com.example.depot.level2"
        let edit = try await http.send("PATCH", path, [Self.bearer, ("Content-Type", "application/json")],
                                       body: Array("{\"title\": \"Level 2: Frozen Lake\", \"description\": \"Twelve stages on thin ice.\"}".utf8))
        #expect(edit.status == 200, "\(edit.text)")
        let product = ConsoleHTTP.json(edit)
        #expect(product["title"] as? String == "Level 2: Frozen Lake" && product["pack"] as? String == "level2" && product["status"] as? String == "live")
        let catalog = try String(contentsOfFile: depot.catalogDirectory + "/products.json", encoding: .utf8)
        #expect(catalog.contains("Level 2: Frozen Lake") && catalog.contains("Twelve stages on thin ice."))
        var listed = false
        for _ in 0..<50 where !listed {
            listed = try await http.send("GET", "/products_v2.json").text.contains("Level 2: Frozen Lake")
            if !listed { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(listed)
        for (body, status) in [("{\"title\": \"\"}", 400), ("{\"type\": \"consumable\"}", 400), ("{}", 400), ("[1]", 400), ("{\"title\": 3}", 400)] {
            #expect(try await http.send("PATCH", path, [Self.bearer, ("Content-Type", "application/json")], body: Array(body.utf8)).status == status, "\(body)")
        }
        let unknown = try await http.send("PATCH", "/admin/v1/products/com.example.nothing", [Self.bearer, ("Content-Type", "application/json")],
                                          body: Array("{\"title\": \"X\"}".utf8))
        #expect(unknown.status == 404)
        // Nothing else changed.
        #expect(try String(contentsOfFile: depot.catalogDirectory + "/products.json", encoding: .utf8) == catalog)
        // The packs listing says how each version is chunked (the sample's version predates chunking records: fixed).
        let packs = ConsoleHTTP.json(try await http.send("GET", "/admin/v1/packs", [Self.bearer]))
        let level2 = ((packs["packs"] as? [[String: Any]]) ?? []).first { $0["id"] as? String == "level2" }
        let chunking = ((level2?["versions"] as? [[String: Any]])?.first?["chunking"] as? [String: Any]) ?? [:]
        #expect(chunking["method"] as? String == "fixed" && chunking["size"] as? Int == 1_048_576)
    }
}
