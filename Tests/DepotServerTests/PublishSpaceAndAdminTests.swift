import Platform
import DepotCore
import DepotWire
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Issue 5: running out of space (CLI and admin upload), and bad input to the admin API.
@Suite("Publishing: free space and the admin API")
struct PublishSpaceAndAdminTests {
    static let adminToken = "admin-token-for-tests-0123456789"

    /// Everything under `content/` except staging, with sizes: what "the live tree" holds.
    static func liveTree(_ content: String) -> [String: Int] {
        var result: [String: Int] = [:]
        let enumerator = FileManager.default.enumerator(atPath: content)
        while let item = enumerator?.nextObject() as? String {
            if item.hasPrefix(".staging") { continue }
            let attributes = try? FileManager.default.attributesOfItem(atPath: content + "/" + item)
            result[item] = (attributes?[.size] as? Int) ?? -1
        }
        return result
    }

    static func stagingPublishes(_ content: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: content + "/.staging")) ?? []).filter { $0.hasPrefix("publish-") }
    }

    @Test func publishRefusesWhenTheVolumeIsFullAndWritesNothing() async throws {
        let tree = TemporaryDirectory("space-cli")
        try await TestDepot.copySample(into: tree.path)
        tree.write("source/big.bin", [UInt8](repeating: 7, count: 200_000))
        let before = Self.liveTree(tree.path + "/content")
        let catalogBefore = tree.read("catalog/products.json")
        // The real publish command on a volume that reports 100,000 bytes free.
        let result = try await ProcessRunner.run(ProcessRunner.testPublisherExecutable, [
            "--free-bytes", "100000", "--", "--pack", "level9", "--product", "com.example.depot.level9", "--type", "non-consumable", "--title", "Nine",
            "--catalog", tree.path + "/catalog", "--content", tree.path + "/content", tree.path + "/source",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bytes required"))
        #expect(result.stderr.contains("100000 bytes free"))
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        #expect(Self.liveTree(tree.path + "/content") == before)
        #expect(tree.read("catalog/products.json") == catalogBefore)
        #expect(Self.stagingPublishes(tree.path + "/content").isEmpty)
    }

    @Test func publisherChecksSpaceWithTheReserve() throws {
        let tree = TemporaryDirectory("space-api")
        try TestDepot.copySample(into: tree.path)
        tree.write("source/a.bin", [UInt8](repeating: 1, count: 10_000))
        let paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content", dataDirectory: "")
        // A 100 MB volume keeps 5 MB free: 10 kB of files need a little over 5 MB.
        let small = Publisher(paths: paths, space: FixedVolumeSpace(free: 5_000_000, total: 100_000_000))
        #expect(small.reserveBytes() == 5_000_000)
        #expect(throws: PublishError.self) {
            try small.publish(PublishRequest(pack: "p", productID: "com.example.p", type: .consumable, title: "P", sources: [tree.path + "/source"]))
        }
        let roomy = Publisher(paths: paths, space: FixedVolumeSpace(free: 6_000_000, total: 100_000_000))
        let outcome = try roomy.publish(PublishRequest(pack: "p", productID: "com.example.p", type: .consumable, title: "P",
                                                       sources: [tree.path + "/source"]))
        #expect(outcome.version == 1)
        // A big volume's reserve is capped at 64 MiB.
        #expect(Publisher(paths: paths, space: FixedVolumeSpace(free: 0, total: 1 << 40)).reserveBytes() == 64 << 20)
    }

    @Test func adminUploadOnAFullVolumeIs507BeforeWriting() async throws {
        let depot = try await TestDepot.start(volumeSpace: FixedVolumeSpace(free: 1_000_000, total: 10_000_000)) {
            $0.adminToken = Self.adminToken
        }
        defer { Task { await depot.stop() } }
        let body = String(repeating: "x", count: 600_000)
        let response = try depot.request("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\nContent-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\n\r\n")
        #expect(response.status == 507)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect((json["error"] as? [String: Any])?["code"] as? String == "insufficient_storage")
        #expect((json["requiredBytes"] as? Int) == 600_000 + 500_000)
        #expect((json["freeBytes"] as? Int) == 1_000_000)
        #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/.staging/uploads/level7"))
    }

    @Test func adminChunkedUploadThatOutgrowsTheVolumeIs507AndLeavesNothing() async throws {
        let depot = try await TestDepot.start(volumeSpace: FixedVolumeSpace(free: 700_000, total: 10_000_000)) {
            $0.adminToken = Self.adminToken
        }
        defer { Task { await depot.stop() } }
        let connection = try depot.connect()
        connection.send("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\nTransfer-Encoding: chunked\r\n\r\n")
        let piece = [UInt8](repeating: 65, count: 100_000)
        for _ in 0..<5 {
            connection.send(Array("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Array("\r\n".utf8))
        }
        connection.send("0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 507)
        let upload = depot.contentDirectory + "/.staging/uploads/level7/1"
        let left = (try? FileManager.default.contentsOfDirectory(atPath: upload)) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    @Test(arguments: [
        ("/admin/v1/packs/level7/1/files/..%2Fescape.bin", 400),
        ("/admin/v1/packs/level7/1/files/%2e%2e/escape.bin", 400),
        ("/admin/v1/packs/level7/1/files/a%5Cb.bin", 400),
        ("/admin/v1/packs/level7/1/files/a%00b.bin", 400),
        ("/admin/v1/packs/level7/1/files/manifest.json", 400),
        ("/admin/v1/packs/level7/1/files/.partial-x", 400),            // the uploads' own scratch names
        ("/admin/v1/packs/level7/1/files/a/.hidden/b.bin", 400),
        ("/admin/v1/packs/..%2Fx/1/files/a.bin", 400),
        ("/admin/v1/packs/bad%20pack/1/files/a.bin", 400),
        ("/admin/v1/packs/level7/0/files/a.bin", 400),
        ("/admin/v1/packs/level7/one/files/a.bin", 400),
        ("/admin/v1/packs/level2/1/files/a.bin", 409),
    ])
    func adminRefusesBadUploadTargets(path: String, status: Int) async throws {
        let depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await depot.stop() } }
        let before = Self.liveTree(depot.contentDirectory)
        let response = try depot.request("PUT \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\nContent-Length: 5\r\n\r\nhello")
        #expect(response.status == status, "\(path): \(response.text)")
        #expect(Self.liveTree(depot.contentDirectory) == before)
        let uploads = depot.contentDirectory + "/.staging/uploads"
        let staged = FileManager.default.enumerator(atPath: uploads)?.allObjects.compactMap { $0 as? String }
            .filter { !FileStatus.isDirectory(uploads + "/" + $0) } ?? []
        #expect(staged.isEmpty, "\(staged)")
    }

    @Test func adminTokenIsRequiredAndTheApiIsAbsentWithoutOne() async throws {
        let withAdmin = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await withAdmin.stop() } }
        for authorization in ["", "Authorization: Bearer wrong-token-wrong-token\r\n", "Authorization: Basic abc\r\n"] {
            let response = try withAdmin.request("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\n\(authorization)Content-Length: 1\r\n\r\nx")
            #expect(response.status == 401)
        }
        let without = try await TestDepot.start()
        defer { Task { await without.stop() } }
        let response = try without.request("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\nContent-Length: 1\r\n\r\nx")
        #expect(response.status == 404)
    }

    @Test func wrongDigestIs400AndKeepsNothing() async throws {
        let depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await depot.stop() } }
        let wrong = String(repeating: "ab", count: 32)
        let response = try depot.request("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\nX-Content-SHA256: \(wrong)\r\nContent-Length: 5\r\n\r\nhello")
        #expect(response.status == 400)
        #expect(response.text.contains("digest_mismatch"))
        let upload = depot.contentDirectory + "/.staging/uploads/level7/1"
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: upload)) ?? []).isEmpty)
        // The right digest (RFC 3230 form) is accepted.
        let right = Data(SHA256Hex.digest(Array("hello".utf8))).base64EncodedString()
        let ok = try depot.request("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\nDigest: sha-256=\(right)\r\nContent-Length: 5\r\n\r\nhello")
        #expect(ok.status == 201)
    }

    @Test func uploadThenPublishByHTTPMakesTheLevelLive() async throws {
        let depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await depot.stop() } }
        let auth = "Authorization: Bearer \(Self.adminToken)\r\n"
        let file = [UInt8](repeating: 42, count: 3000)
        let connection = try depot.connect()
        connection.send(Array("PUT /admin/v1/packs/level7/1/files/stages/s1.bin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 3000\r\n\r\n".utf8) + file)
        #expect(try connection.readResponse().status == 201)
        // Bad product fields are refused and leave the upload in staging for a retry. A number is no boolean and a
        // fraction no chunk size (JSONSerialization hands both out as NSNumber: `1 as? Bool` succeeds on Linux).
        let fields = "\"id\": \"com.example.depot.level7\", \"type\": \"non-consumable\", \"title\": \"T\""
        for body in ["{\"id\": \"bad id!\", \"type\": \"consumable\", \"title\": \"T\"}", "{\"id\": \"com.example.depot.level7\", \"type\": \"gift\", \"title\": \"T\"}", "not json",
                     "{\(fields), \"stage\": 1}", "{\(fields), \"stage\": 0}", "{\(fields), \"chunkSize\": 4096.5}",
                     "{\(fields), \"chunkSize\": true}"] {
            connection.send("POST /admin/v1/packs/level7/1/publish HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            #expect(try connection.readResponse().status == 400, "\(body)")
        }
        #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/level7"))
        let body = "{\"id\": \"com.example.depot.level7\", \"type\": \"non-consumable\", \"title\": \"Level 7\", \"description\": \"Seven\"}"
        connection.send("POST /admin/v1/packs/level7/1/publish HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let published = try connection.readResponse()
        #expect(published.status == 201, "\(published.text)")
        let list = try depot.get("/products_v1.json")
        #expect(list.text.contains("com.example.depot.level7"))
        // The version now exists: uploading into it again is refused.
        connection.send("PUT /admin/v1/packs/level7/1/files/x.bin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 1\r\n\r\nx")
        #expect(try connection.readResponse().status == 409)
        #expect(DepotCheck.run(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                 dataDirectory: "")).problems.isEmpty)
    }
}

/// SHA-256 for test expectations (libcrypto through DepotCrypto).
import DepotCrypto
enum SHA256Hex {
    static func digest(_ bytes: [UInt8]) -> [UInt8] { SHA256.hash(bytes) }
}

/// Review fixes: a publish retried after a failed attempt, and empty files answered at once.
@Suite("Publishing: retries and empty files")
struct PublishRetryTests {
    @Test func leftoversOfAFailedPublishAreNotPublished() async throws {
        let depot = try await TestDepot.start { $0.adminToken = PublishSpaceAndAdminTests.adminToken }
        defer { Task { await depot.stop() } }
        let auth = "Authorization: Bearer \(PublishSpaceAndAdminTests.adminToken)\r\n"
        let connection = try depot.connect()
        connection.send("PUT /admin/v1/packs/level8/1/files/a.bin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 3\r\n\r\nabc")
        #expect(try connection.readResponse().status == 201)
        // What an interrupted earlier attempt left in the upload directory.
        depot.tree.write("content/.staging/uploads/level8/1/manifest.json", "{}")
        depot.tree.write("content/.staging/uploads/level8/1/.manifest.json.tmp-123-456", "{")
        let body = "{\"id\": \"com.example.depot.level8\", \"type\": \"consumable\", \"title\": \"Eight\"}"
        connection.send("POST /admin/v1/packs/level8/1/publish HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let published = try connection.readResponse()
        #expect(published.status == 201, "\(published.text)")
        let manifest = try PackManifest.decode(try #require(depot.tree.read("content/level8/1/manifest.json")), file: "manifest")
        #expect(manifest.files.map(\.path) == ["a.bin"])
        #expect(DepotCheck.run(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                 dataDirectory: "")).problems.isEmpty)
    }

    @Test func aPublishThatFailsGivesTheUploadsBackForARetry() async throws {
        let depot = try await TestDepot.start { $0.adminToken = PublishSpaceAndAdminTests.adminToken }
        defer { Task { await depot.stop() } }
        let auth = "Authorization: Bearer \(PublishSpaceAndAdminTests.adminToken)\r\n"
        let connection = try depot.connect()
        connection.send("PUT /admin/v1/packs/level8/1/files/a.bin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 3\r\n\r\nabc")
        #expect(try connection.readResponse().status == 201)
        // A symlink in the upload directory makes the claimed publish fail after the claim.
        let uploads = depot.contentDirectory + "/.staging/uploads/level8/1"
        #expect(symlink("/etc/hostname", uploads + "/link.bin") == 0)
        let body = "{\"id\": \"com.example.depot.level8\", \"type\": \"consumable\", \"title\": \"Eight\"}"
        let request = "POST /admin/v1/packs/level8/1/publish HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        connection.send(request)
        #expect(try connection.readResponse().status == 400)
        #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/level8"))
        // The uploads are back where they were, without a manifest; fixing the input lets the retry succeed.
        #expect(FileManager.default.fileExists(atPath: uploads + "/a.bin"))
        #expect(!FileManager.default.fileExists(atPath: uploads + "/manifest.json"))
        unlink(uploads + "/link.bin")
        connection.send(request)
        #expect(try connection.readResponse().status == 201)
    }

    @Test func emptyFilesAreAnsweredAtOnce() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        depot.tree.write("src/empty.bin", [])
        depot.tree.write("src/one.bin", [1])
        let publisher = Publisher(paths: DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                                                    dataDirectory: ""))
        _ = try publisher.publish(PublishRequest(pack: "tiny", productID: "com.example.depot.tiny", type: .consumable, title: "Tiny",
                                                 sources: [depot.tree.path + "/src"]))
        #expect(depot.app.reloadCatalog())
        let token = try OperatorTokens.issue(pack: "tiny", ttl: 600, account: nil, secret: "test-secret-test-secret-test-secret-0123",
                                             dataDirectory: depot.dataDirectory)
        let connection = try depot.connect()
        // Before the fix the head of an empty body waited for the kernel's ~200 ms MSG_MORE timer each time.
        let started = Date()
        for _ in 0..<10 {
            connection.send("GET /v1/packs/tiny/1/files/empty.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "0")
        }
        #expect(Date().timeIntervalSince(started) < 1.5)
    }
}
