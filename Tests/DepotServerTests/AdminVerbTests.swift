import DepotCrypto
import DepotTestSupport
import DepotWire
import Foundation
import Testing
import DepotServer

/// Issue 11, missing piece 2 (operations.md §1): the CLI's verbs over HTTP, with the same rules and errors.
@Suite("Admin API: listings, retire, prune, check, uploads")
struct AdminVerbTests {
    static let token = "admin-verbs-token-0123456789"
    static var auth: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    static func start() async throws -> TestDepot {
        try await TestDepot.start { $0.adminToken = token }
    }

    /// One request with a body, off the cooperative pool.
    static func send(_ depot: TestDepot, _ method: String, _ path: String, body: String? = nil,
                     headers: [(String, String)] = auth) async throws -> RawResponse {
        var raw = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n"
        for (name, value) in headers { raw += "\(name): \(value)\r\n" }
        if let body { raw += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body } else { raw += "\r\n" }
        let request = raw
        return try await OffPool.run { try depot.request(request) }
    }

    static func object(_ response: RawResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response.status) \(response.text)")
    }

    static func code(_ response: RawResponse) throws -> String? {
        (try object(response)["error"] as? [String: Any])?["code"] as? String
    }

    /// Publishes version `version` of `pack` through the admin API.
    static func publish(_ depot: TestDepot, pack: String, version: Int, product: String, bytes: [UInt8]) async throws {
        let upload = "PUT \(WirePath.adminPackFile(pack: pack, version: version, path: "data.bin")) HTTP/1.1\r\nHost: x\r\n"
            + "Authorization: Bearer \(token)\r\nContent-Length: \(bytes.count)\r\n\r\n"
        let response = try await OffPool.run { () -> RawResponse in
            let connection = try depot.connect()
            connection.send(upload)
            connection.send(bytes)
            return try connection.readResponse()
        }
        #expect(response.status == 201, "\(response.text)")
        let published = try await send(depot, "POST", WirePath.adminPublish(pack: pack, version: version),
                                       body: "{\"id\": \"\(product)\", \"type\": \"non-consumable\", \"title\": \"T\"}")
        #expect(published.status == 201, "\(published.text)")
    }

    @Test func everyVerbNeedsTheToken() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let verbs: [(String, String, String?)] = [
            ("GET", "/admin/v1/products", nil), ("POST", WirePath.adminRetire(product: "com.example.depot.level2"), nil),
            ("POST", WirePath.adminUnretire(product: "com.example.depot.level2"), nil), ("GET", "/admin/v1/packs", nil),
            ("POST", "/admin/v1/prune", "{\"keep\": 1}"), ("GET", "/admin/v1/check", nil),
            ("DELETE", WirePath.adminUpload(pack: "level2", version: 9), nil),
        ]
        for (method, path, body) in verbs {
            for headers in [[], [("Authorization", "Bearer wrong-token-wrong-token")]] {
                let response = try await Self.send(depot, method, path, body: body, headers: headers)
                #expect(response.status == 401, "\(method) \(path)")
                #expect(try Self.code(response) == "unauthorized")
            }
        }
        // Nothing was changed by the refused calls.
        #expect(try await depot.send("GET", "/products_v1.json").text.contains("com.example.depot.level2"))
    }

    @Test func productsRetireAndUnretire() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let listed = try Self.object(try await Self.send(depot, "GET", "/admin/v1/products"))
        let products = try #require(listed["products"] as? [[String: Any]])
        #expect(products.count == 4)
        let level2 = try #require(products.first { $0["id"] as? String == "com.example.depot.level2" })
        #expect(level2["pack"] as? String == "level2" && level2["status"] as? String == "live" && level2["type"] as? String == "non-consumable")
        #expect(products.first { $0["id"] as? String == "com.example.depot.coins100" }?["pack"] == nil, "no pack: left out, as in products.json")

        for _ in 0..<2 {
            let retired = try await Self.send(depot, "POST", WirePath.adminRetire(product: "com.example.depot.level2"))
            #expect(retired.status == 200)
            #expect(retired.text == "{\"id\": \"com.example.depot.level2\", \"status\": \"retired\"}\n")
        }
        #expect(!(try await depot.send("GET", "/products_v1.json").text.contains("com.example.depot.level2")), "off sale at once")
        let after = try #require(try Self.object(try await Self.send(depot, "GET", "/admin/v1/products"))["products"] as? [[String: Any]])
        #expect(after.count == 4, "retired products are listed too")
        #expect(after.first { $0["id"] as? String == "com.example.depot.level2" }?["status"] as? String == "retired")

        for _ in 0..<2 {
            let live = try await Self.send(depot, "POST", WirePath.adminUnretire(product: "com.example.depot.level2"))
            #expect(try live.status == 200 && Self.object(live)["status"] as? String == "live")
        }
        #expect(try await depot.send("GET", "/products_v1.json").text.contains("com.example.depot.level2"))

        for path in [WirePath.adminRetire(product: "com.example.depot.nosuch"), WirePath.adminUnretire(product: "com.example.depot.nosuch")] {
            let unknown = try await Self.send(depot, "POST", path)
            #expect(try unknown.status == 404 && Self.code(unknown) == "not_found")
        }
        #expect(try await Self.send(depot, "GET", WirePath.adminRetire(product: "com.example.depot.level2")).status == 405)
    }

    @Test func packsShowLiveStagedAndPreviousVersions() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        try await Self.publish(depot, pack: "world", version: 1, product: "com.example.depot.world", bytes: SecureRandom.bytes(5000))
        try await Self.publish(depot, pack: "world", version: 2, product: "com.example.depot.world", bytes: SecureRandom.bytes(7000))
        // A version newer than the live one (published, not made live): staged.
        try await Self.publish(depot, pack: "world", version: 3, product: "com.example.depot.world", bytes: SecureRandom.bytes(9000))
        try Data("2\n".utf8).write(to: URL(fileURLWithPath: depot.contentDirectory + "/world/current"))

        let listing = try Self.object(try await Self.send(depot, "GET", "/admin/v1/packs"))
        let packs = try #require(listing["packs"] as? [[String: Any]])
        #expect(packs.map { $0["id"] as? String } == ["level2", "level3", "world"])
        let world = try #require(packs.last)
        #expect(world["live"] as? Int == 2)
        let versions = try #require(world["versions"] as? [[String: Any]])
        #expect(versions.map { $0["version"] as? Int } == [1, 2, 3])
        #expect(versions.map { $0["state"] as? String } == ["previous", "live", "staged"])
        #expect(versions.map { $0["bytes"] as? Int } == [5000, 7000, 9000])
        #expect(versions.allSatisfy { $0["files"] as? Int == 1 && ($0["published"] as? String).flatMap(InternetDate.parse) != nil })
        #expect(AdminPacks.State.of(4, live: nil) == "staged")
    }

    @Test func pruneWithDryRunThenForReal() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        for version in 1...3 {
            try await Self.publish(depot, pack: "world", version: version, product: "com.example.depot.world", bytes: SecureRandom.bytes(1000 * version))
        }
        let dry = try await Self.send(depot, "POST", "/admin/v1/prune", body: "{\"keep\": 1, \"pack\": \"world\", \"dryRun\": true}")
        #expect(dry.status == 200)
        // The bytes freed: the version's files on disk, its manifest included.
        let sizes = [2, 1].map { Publisher.bytesOnDisk(depot.contentDirectory + "/world/\($0)") }
        #expect(sizes[0] > 2000 && sizes[1] > 1000)
        #expect(dry.text == "{\"removed\": [{\"pack\": \"world\", \"version\": 2, \"bytes\": \(sizes[0])}, "
            + "{\"pack\": \"world\", \"version\": 1, \"bytes\": \(sizes[1])}], \"dryRun\": true}\n")
        #expect(FileManager.default.fileExists(atPath: depot.contentDirectory + "/world/1"), "a dry run deletes nothing")

        let done = try Self.object(try await Self.send(depot, "POST", "/admin/v1/prune", body: "{\"keep\": 2}"))
        #expect(done["dryRun"] as? Bool == false)
        #expect((done["removed"] as? [[String: Any]])?.map { $0["version"] as? Int } == [1])
        #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/world/1"))
        #expect(FileManager.default.fileExists(atPath: depot.contentDirectory + "/world/2"))
        let again = try Self.object(try await Self.send(depot, "POST", "/admin/v1/prune", body: "{\"keep\": 2}"))
        #expect((again["removed"] as? [Any])?.isEmpty == true)

        for body in ["{\"keep\": 0}", "{\"keep\": \"1\"}", "{}", "[", "{\"keep\": 1, \"pack\": \"../x\"}", "{\"keep\": 1, \"dryRun\": \"yes\"}"] {
            let bad = try await Self.send(depot, "POST", "/admin/v1/prune", body: body)
            #expect(try bad.status == 400 && Self.code(bad) == "bad_request", "\(body)")
        }
        let unknown = try await Self.send(depot, "POST", "/admin/v1/prune", body: "{\"keep\": 1, \"pack\": \"nosuch\"}")
        #expect(unknown.status == 404)
    }

    @Test func checkReportsWhatDepotCheckReports() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let clean = try await Self.send(depot, "GET", "/admin/v1/check")
        #expect(clean.status == 200 && clean.text == "{\"ok\": true, \"problems\": []}\n")
        // Damage a pack file: its bytes no longer match the manifest.
        let path = depot.contentDirectory + "/level2/1/README.txt"
        try Data("tampered\n".utf8).write(to: URL(fileURLWithPath: path))
        let found = try Self.object(try await Self.send(depot, "GET", "/admin/v1/check"))
        #expect(found["ok"] as? Bool == false)
        let problems = try #require(found["problems"] as? [[String: Any]])
        #expect(problems.contains { ($0["file"] as? String)?.hasSuffix("level2/1/manifest.json") == true && ($0["field"] as? String)?.hasPrefix("files[") == true
            && $0["message"] is String }, "\(problems)")
        let cli = DepotCheck.run(paths: depot.app.configuration.paths)
        #expect(cli.problems.count == problems.count)
    }

    @Test func deletingAnUploadThatWasNeverPublished() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let bytes = Array("hello".utf8)
        let upload = "PUT \(WirePath.adminPackFile(pack: "draft", version: 1, path: "a/b.bin")) HTTP/1.1\r\nHost: x\r\n"
            + "Authorization: Bearer \(Self.token)\r\nContent-Length: \(bytes.count)\r\n\r\nhello"
        #expect(try await OffPool.run { try depot.request(upload) }.status == 201)
        let uploads = depot.contentDirectory + "/.staging/uploads/draft/1"
        #expect(FileManager.default.fileExists(atPath: uploads + "/a/b.bin"))

        let deleted = try await Self.send(depot, "DELETE", WirePath.adminUpload(pack: "draft", version: 1))
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: uploads))
        let nothing = try await Self.send(depot, "DELETE", WirePath.adminUpload(pack: "draft", version: 1))
        #expect(try nothing.status == 404 && Self.code(nothing) == "not_found")
        // A published version is not an upload: 409, and it stays.
        let published = try await Self.send(depot, "DELETE", WirePath.adminUpload(pack: "level2", version: 1))
        #expect(try published.status == 409 && Self.code(published) == "conflict")
        #expect(FileManager.default.fileExists(atPath: depot.contentDirectory + "/level2/1/manifest.json"))
        let badVersion = try await Self.send(depot, "DELETE", "/admin/v1/packs/draft/0/upload")
        #expect(badVersion.status == 400)
        // Publishing what was deleted finds nothing.
        let publish = try await Self.send(depot, "POST", WirePath.adminPublish(pack: "draft", version: 1),
                                          body: "{\"id\": \"com.example.depot.draft\", \"type\": \"consumable\", \"title\": \"D\"}")
        #expect(publish.status == 404)
    }
}
