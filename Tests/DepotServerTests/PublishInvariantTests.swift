import DepotCore
import DepotWire
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// The invariants a publish keeps beyond crash safety (spec §2.1, §2.2, §4.7): version numbers are
/// immutable and only go up (a pruned number is never reused), a publish cannot take over another pack's
/// product or change a product's type, and admin uploads whose paths clash get a 409.
@Suite("Publishing: versions only go up, products keep their pack and type")
struct PublishInvariantTests {
    static func tree() throws -> (TemporaryDirectory, DepotPaths) {
        let tree = TemporaryDirectory("publish-invariants")
        try TestDepot.copySample(into: tree.path)
        tree.write("source/a.bin", PackFixture.bytes(3000, seed: 5))
        let paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content",
                               dataDirectory: tree.path + "/var")
        return (tree, paths)
    }

    static func request(_ tree: TemporaryDirectory, pack: String = "level9", product: String = "com.example.depot.level9",
                        type: ProductType = .nonConsumable, version: Int? = nil) -> PublishRequest {
        PublishRequest(pack: pack, productID: product, type: type, title: "Nine", version: version, chunking: .fixed, chunkSize: 1024,
                       sources: [tree.path + "/source/a.bin"])
    }

    @Test func aPrunedVersionNumberIsNeverReused() throws {
        let (tree, paths) = try Self.tree()
        let publisher = Publisher(paths: paths)
        for expected in 1...3 { #expect(try publisher.publish(Self.request(tree)).version == expected) }
        #expect(try publisher.prune(keep: 1).map(\.name).sorted() == ["level9/1", "level9/2"])
        for reused in [1, 2, 3] {
            #expect(throws: PublishError.versionExists(pack: "level9", version: reused, newest: 3)) {
                try publisher.publish(Self.request(tree, version: reused))
            }
        }
        #expect(tree.read("content/level9/current").map { String(decoding: $0, as: UTF8.self) } == "3\n")
        #expect(try publisher.publish(Self.request(tree)).version == 4)
        #expect(try publisher.publish(Self.request(tree, version: 10)).version == 10)
        #expect(publisher.versionRefusal(pack: "level9", version: 7) != nil)
        #expect(publisher.versionRefusal(pack: "level9", version: 11) == nil)
        #expect(publisher.versionRefusal(pack: "newpack", version: 1) == nil)
    }

    @Test(arguments: [
        ("com.example.depot.level2", ProductType.nonConsumable, "unlocks pack level2"),   // another pack's product
        ("com.example.depot.coins100", ProductType.nonConsumable, "is consumable"),       // a type change
    ])
    func aPublishCannotTakeOverOrRetypeAProduct(product: String, type: ProductType, message: String) throws {
        let (tree, paths) = try Self.tree()
        let catalogBefore = tree.read("catalog/products.json")
        do {
            _ = try Publisher(paths: paths).publish(Self.request(tree, product: product, type: type))
            Issue.record("published \(product) as \(type) into level9")
        } catch {
            if case .productConflict(let why) = error { #expect(why.contains(message), "\(why)") } else { Issue.record("\(error)") }
        }
        #expect(tree.read("catalog/products.json") == catalogBefore)
        #expect(!FileManager.default.fileExists(atPath: paths.contentDirectory + "/level9"))
    }

    /// A product listed without a pack may get one (same type): the operator adds the content later.
    @Test func aProductWithoutAPackCanGetOne() throws {
        let (tree, paths) = try Self.tree()
        tree.write("catalog/products.json", "{\"products\": [{\"id\": \"com.example.depot.level9\", \"type\": \"non-consumable\", "
                   + "\"title\": \"Soon\", \"status\": \"live\"}]}\n")
        let publisher = Publisher(paths: paths)
        #expect(try publisher.publish(Self.request(tree)).version == 1)
        #expect(try publisher.loadCatalog().products.first?.pack == "level9")
    }

    /// A file where a directory must go is an error, not a silent success (EEXIST from mkdir is not enough).
    @Test func makingADirectoryWhereAFileIsFails() throws {
        let tree = TemporaryDirectory("publish-mkdir")
        tree.write("a/file", "x")
        #expect(throws: DurableFiles.Failure.self) { try DurableFiles.makeDirectory(tree.path + "/a/file") }
        #expect(throws: DurableFiles.Failure.self) { try DurableFiles.makeDirectory(tree.path + "/a/file/below") }
        try DurableFiles.makeDirectory(tree.path + "/a/new/deeper")
        #expect(FileStatus.isDirectory(tree.path + "/a/new/deeper"))
    }

    @Test func aPublishUpdatesItsOwnProduct() throws {
        let (tree, paths) = try Self.tree()
        let publisher = Publisher(paths: paths)
        let outcome = try publisher.publish(Self.request(tree, pack: "level2", product: "com.example.depot.level2"))
        #expect(outcome.version == 2)
        let catalog = try publisher.loadCatalog()
        #expect(catalog.products.first { $0.id == "com.example.depot.level2" }?.title == "Nine")
    }

    @Test func theAdminAPIRefusesOldVersionsTakeoversAndClashingPaths() async throws {
        let token = PublishSpaceAndAdminTests.adminToken
        let depot = try await TestDepot.start { $0.adminToken = token }
        defer { Task { await depot.stop() } }
        let auth = "Authorization: Bearer \(token)\r\n"
        // Uploads and publishes run on the server's worker pool: the blocking reads of their answers wait on a thread
        // of their own, not on one of the cooperative threads the rest of the test process needs.
        nonisolated(unsafe) let connection = try depot.connect()
        func put(_ path: String, _ body: String = "abc") async throws -> RawResponse {
            try await OffPool.run {
                connection.send("PUT /admin/v1/packs/\(path) HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                return try connection.readResponse()
            }
        }
        func publish(_ path: String, _ body: String) async throws -> RawResponse {
            try await OffPool.run {
                connection.send("POST /admin/v1/packs/\(path)/publish HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                return try connection.readResponse()
            }
        }
        // level2 is live at version 1: neither an upload into 1 nor a publish of 1 (nothing staged) is possible.
        #expect(try await put("level2/1/files/a.bin").status == 409)
        let republish = try await publish("level2/1", "{\"id\": \"com.example.depot.level2\", \"type\": \"non-consumable\", \"title\": \"T\"}")
        #expect(republish.status == 409 && republish.text.contains("version_exists"), "\(republish.text)")
        // A file where a directory must go, and the other way round.
        #expect(try await put("level9/1/files/f.bin").status == 201)
        let below = try await put("level9/1/files/f.bin/child.txt")
        #expect(below.status == 409 && below.text.contains("\"conflict\""), "\(below.text)")
        #expect(try await put("level9/1/files/d/e.bin").status == 201)
        #expect(try await put("level9/1/files/d").status == 409)
        // Publishing these uploads under level2's product is a takeover: 409, and the uploads stay for a retry.
        let takeover = try await publish("level9/1", "{\"id\": \"com.example.depot.level2\", \"type\": \"non-consumable\", \"title\": \"T\"}")
        #expect(takeover.status == 409 && takeover.text.contains("\"conflict\""), "\(takeover.text)")
        #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/level9"))
        let own = try await publish("level9/1", "{\"id\": \"com.example.depot.level9\", \"type\": \"non-consumable\", \"title\": \"Nine\"}")
        #expect(own.status == 201, "\(own.text)")
        let manifest = try PackManifest.decode(try #require(depot.tree.read("content/level9/1/manifest.json")), file: "manifest")
        #expect(manifest.files.map(\.path).sorted() == ["d/e.bin", "f.bin"])
    }

    /// A publish never claims a version while an upload into it is in flight (its bytes would be lost or
    /// its partial file would block the version); it is refused, and succeeds once the upload is done.
    @Test func aPublishWaitsForNoUploadAndIsRefusedDuringOne() async throws {
        let token = PublishSpaceAndAdminTests.adminToken
        // No minimum body rate: the half-sent upload must stay in flight however long the shared worker pool of a
        // whole test process takes to start its sink (more than the rate's 10 s window has been seen, which cut it).
        let depot = try await TestDepot.start {
            $0.adminToken = token
            $0.bodyMinimumRate = 0
        }
        defer { Task { await depot.stop() } }
        let auth = "Authorization: Bearer \(token)\r\n"
        nonisolated(unsafe) let first = try depot.connect()
        first.send("PUT /admin/v1/packs/level9/1/files/a.bin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 3\r\n\r\nabc")
        // Publishing and uploads run on the worker pool at a lower priority: a saturated machine takes seconds. The
        // answers are waited for on threads of their own (not on a cooperative thread the rest of the process needs).
        #expect(try await OffPool.run { try first.readResponse(timeout: 120) }.status == 201)
        // Half of b.bin: the upload is in flight once its partial file exists.
        nonisolated(unsafe) let slow = try depot.connect()
        slow.send("PUT /admin/v1/packs/level9/1/files/b.bin HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: 6\r\n\r\nabc")
        let uploads = depot.contentDirectory + "/.staging/uploads/level9/1"
        #expect(try await eventually(within: 120) {
            ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).contains { $0.hasPrefix(".partial-") }
        })
        let body = "{\"id\": \"com.example.depot.level9\", \"type\": \"non-consumable\", \"title\": \"Nine\"}"
        let publish = "POST /admin/v1/packs/level9/1/publish HTTP/1.1\r\nHost: x\r\n\(auth)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let refused = try await OffPool.run { try depot.request(publish, timeout: 120) }
        #expect(refused.status == 409 && refused.text.contains("in progress"), "\(refused.text)")
        slow.send("def")
        #expect(try await OffPool.run { try slow.readResponse(timeout: 120) }.status == 201)
        let published = try await OffPool.run { try depot.request(publish, timeout: 120) }
        #expect(published.status == 201, "\(published.text)")
        let manifest = try PackManifest.decode(try #require(depot.tree.read("content/level9/1/manifest.json")), file: "manifest")
        #expect(manifest.files.map(\.path) == ["a.bin", "b.bin"])
    }

    /// Partial files a killed server left in the upload area do not block the version for ever: the next
    /// start removes them. One written recently is left alone: on a shared content volume another instance
    /// may be receiving it (scale-out §4).
    @Test func partialFilesOfAnEarlierRunAreSweptAtStart() async throws {
        let tree = TemporaryDirectory("publish-partial")
        try await TestDepot.copySample(into: tree.path)
        tree.write("content/.staging/uploads/level9/1/a.bin", "abc")
        tree.write("content/.staging/uploads/level9/1/.partial-0123", "ab")
        tree.write("content/.staging/uploads/level8/1/.partial-4567", "cd")
        let abandoned = Date().addingTimeInterval(-2 * 3_600)
        try FileManager.default.setAttributes([.modificationDate: abandoned],
                                              ofItemAtPath: tree.path + "/content/.staging/uploads/level9/1/.partial-0123")
        let token = PublishSpaceAndAdminTests.adminToken
        let depot = try await TestDepot.start(tree: tree) { $0.adminToken = token }
        defer { Task { await depot.stop() } }
        #expect(tree.read("content/.staging/uploads/level9/1/.partial-0123") == nil)
        #expect(tree.read("content/.staging/uploads/level8/1/.partial-4567") != nil)
        let body = "{\"id\": \"com.example.depot.level9\", \"type\": \"non-consumable\", \"title\": \"Nine\"}"
        let published = try depot.request("POST /admin/v1/packs/level9/1/publish HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                                          + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(published.status == 201, "\(published.text)")
    }

    /// spec §5: "Usage errors exit 64 with a one-line message", invalid option values included.
    @Test(arguments: [
        ["publish", "--pack", "../evil", "--product", "com.example.depot.x", "--type", "consumable", "--title", "T", "source/a.bin"],
        ["publish", "--pack", "ok", "--product", "x/y", "--type", "consumable", "--title", "T", "source/a.bin"],
        ["publish", "--pack", "ok", "--product", "com.example.depot.x", "--type", "consumable", "--title", "T", "source/missing.bin"],
        ["token", "--pack", "../x"],
    ])
    func invalidOptionValuesAreUsageErrors(_ arguments: [String]) async throws {
        let (tree, _) = try Self.tree()
        let before = tree.read("catalog/products.json")
        let result = try await CommandLineCheckTests.depot(arguments, in: tree.path)
        #expect(result.status == 64, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("depot: \(arguments[0]): "), "\(result.stderr)")
        #expect(tree.read("catalog/products.json") == before)
    }
}
