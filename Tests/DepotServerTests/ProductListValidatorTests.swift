import Platform
import DepotCore
import DepotWire
import DepotTestSupport
import Foundation
import HTTP
import Testing
import DepotServer

/// spec §4.1: validators survive a restart, agree between replicas, and move only with the bytes of their list.
@Suite struct ProductListValidatorTests {
    /// Validators of both lists, identity and gzip.
    static func all(_ depot: TestDepot) async throws -> [String: ListValidators] {
        var result: [String: ListValidators] = [:]
        for list in ListPath.allCases {
            result[list.rawValue] = try await depot.validators(list)
            result[list.rawValue + " gzip"] = ListValidators(try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip")]))
        }
        return result
    }

    static func body(_ depot: TestDepot, _ list: ListPath) async throws -> [UInt8] {
        try await depot.send("GET", list.rawValue).body
    }

    static func updated(_ depot: TestDepot) async throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(try await body(depot, .v2))) as? [String: Any]
        return object?["updated"] as? String
    }

    static func httpDate(_ seconds: Int64) -> String { HTTPDate.format(seconds) }

    @Test func validatorsSurviveARestart() async throws {
        let tree = TemporaryDirectory("depot-restart")
        try await TestDepot.copySample(into: tree.path)
        let before = try await withDepot(tree: tree) { try await Self.all($0) }
        let after = try await withDepot(tree: tree) { try await Self.all($0) }
        #expect(before.count == 4)
        #expect(before.values.allSatisfy { $0.etag != nil && $0.lastModified != nil })
        #expect(before == after)
    }

    /// A damaged record does not stop the server (the lists take the catalog file's time) but is logged.
    @Test func aDamagedValidatorRecordIsLogged() async throws {
        let tree = TemporaryDirectory("depot-bad-record")
        try await TestDepot.copySample(into: tree.path)
        tree.write("catalog/lists.json", "{")
        let depot = try await TestDepot.start(tree: tree)
        defer { Task { await depot.stop() } }
        #expect(try await depot.send("GET", ListPath.v1.rawValue).status == 200)
        #expect(depot.logRecords.contains { $0.level == "warning" && $0.message.contains("lists.json: is not a JSON object") }, "\(depot.logs.lines)")
    }

    @Test func replicasOnCopiesAgree() async throws {
        let a = TemporaryDirectory("depot-replica-a")
        let b = TemporaryDirectory("depot-replica-b")
        try await TestDepot.copySample(into: a.path)
        try await TreeFiles.copy(a.path + "/catalog", to: b.path + "/catalog")
        try await TreeFiles.copy(a.path + "/content", to: b.path + "/content")
        let first = try await withDepot(tree: a) { try await Self.all($0) }
        let second = try await withDepot(tree: b) { try await Self.all($0) }
        #expect(first == second)
    }

    @Test func recordMatchWinsOverFileTimes() async throws {
        // A replica whose files have other mtimes (a plain copy) still agrees while the record matches.
        let a = TemporaryDirectory("depot-replica-a")
        let b = TemporaryDirectory("depot-replica-b")
        try await TestDepot.copySample(into: a.path)
        try await TestDepot.copySample(into: b.path)
        try TreeFiles.setModified(b.path + "/catalog/products.json", Date())
        try TreeFiles.setModified(b.path + "/content/level2/current", Date())
        let first = try await withDepot(tree: a) { try await Self.all($0) }
        let second = try await withDepot(tree: b) { try await Self.all($0) }
        #expect(first == second)
        #expect(first[ListPath.v1.rawValue]?.lastModified == Self.httpDate(try #require(try TreeFiles.recordedTime(catalog: a.path + "/catalog", list: .v1))))
    }

    @Test func reformattingTheCatalogByHandKeepsBothValidators() async throws {
        try await withDepot { depot in
            let before = try await Self.all(depot)
            let v1 = try await Self.body(depot, .v1)
            // Same products, other layout, a new mtime, lists.json untouched.
            let catalog = try CatalogDecoder.decode(Array(SampleCatalog.text.utf8), file: "x").get()
            let compact = "{\"products\":[" + catalog.products.map { p in
                SampleCatalog.product(p.id, type: p.type.rawValue, title: p.title, description: p.description, pack: p.pack,
                                      status: p.status.rawValue)
            }.joined(separator: ",") + "]}"
            try TreeFiles.replace(depot.catalogDirectory + "/products.json", compact, modified: Date().addingTimeInterval(120))
            #expect(depot.app.reloadCatalog())
            #expect(try await Self.all(depot) == before)
            #expect(try await Self.body(depot, .v1) == v1)
        }
    }

    @Test func titleOnlyHandEditMovesV2Only() async throws {
        try await withDepot { depot in
            let before = try await Self.all(depot)
            let v1Body = try await Self.body(depot, .v1)
            let updatedBefore = try await Self.updated(depot)
            let edited = SampleCatalog.text.replacingOccurrences(of: "\"Level 2: Glacier\"", with: "\"Level 2: Glacier Deluxe\"")
            #expect(edited != SampleCatalog.text)
            // A hand edit without updating lists.json: the file's mtime is when v2's bytes changed.
            let editTime = Date(timeIntervalSince1970: 1_900_000_000)
            try TreeFiles.replace(depot.catalogDirectory + "/products.json", edited, modified: editTime)
            #expect(depot.app.reloadCatalog())
            let after = try await Self.all(depot)
            #expect(after[ListPath.v1.rawValue] == before[ListPath.v1.rawValue], "v1's bytes did not change")
            #expect(after[ListPath.v1.rawValue + " gzip"] == before[ListPath.v1.rawValue + " gzip"])
            #expect(try await Self.body(depot, .v1) == v1Body)
            #expect(after[ListPath.v2.rawValue]?.etag != before[ListPath.v2.rawValue]?.etag)
            #expect(after[ListPath.v2.rawValue + " gzip"]?.etag != before[ListPath.v2.rawValue + " gzip"]?.etag)
            #expect(after[ListPath.v2.rawValue]?.lastModified == Self.httpDate(1_900_000_000))
            let updatedAfter = try await Self.updated(depot)
            #expect(updatedAfter == "2030-03-17T17:46:40Z")
            #expect(updatedAfter != updatedBefore)
            #expect(String(decoding: try await Self.body(depot, .v2), as: UTF8.self).contains("Level 2: Glacier Deluxe"))
        }
    }

    @Test func publishingOnlyV2FieldsKeepsV1Validators() async throws {
        try await withDepot { depot in
            let before = try await Self.all(depot)
            let source = TemporaryDirectory("depot-publish-source")
            source.write("stages.bin", [UInt8](repeating: 7, count: 3000))
            let publishTime: Int64 = 1_900_000_000
            let publisher = Publisher(paths: depot.app.configuration.paths, space: FixedVolumeSpace(free: 1 << 40),
                                      now: { publishTime })
            let outcome = try publisher.publish(PublishRequest(
                pack: "level2", productID: "com.example.depot.level2", type: .nonConsumable, title: "Level 2: Glacier (new)",
                description: nil, version: nil, chunking: .fixed, chunkSize: 1024, sources: [source.path + "/stages.bin"]))
            #expect(outcome.version == 2)
            #expect(depot.app.reloadCatalog())
            let after = try await Self.all(depot)
            #expect(after[ListPath.v1.rawValue] == before[ListPath.v1.rawValue])
            #expect(after[ListPath.v1.rawValue + " gzip"] == before[ListPath.v1.rawValue + " gzip"])
            #expect(after[ListPath.v2.rawValue]?.etag != before[ListPath.v2.rawValue]?.etag)
            #expect(after[ListPath.v2.rawValue]?.lastModified == Self.httpDate(publishTime))
            #expect(try await Self.updated(depot) == Timestamp.rfc3339(publishTime))
            // The record now holds the new times: a restart (or a replica) serves the same validators.
            #expect(try TreeFiles.recordedTime(catalog: depot.catalogDirectory, list: .v2) == publishTime)
            // (A replica of its own: one SQLite data directory serves one instance.)
            let restarted = try await withDepot(tree: depot.tree, configure: { $0.dataDirectory = depot.tree.path + "/var-replica" }) {
                try await Self.all($0)
            }
            #expect(restarted == after)
        }
    }

    @Test func addingAProductByHandMovesBothLists() async throws {
        try await withDepot { depot in
            let before = try await Self.all(depot)
            let editTime: Int64 = 1_900_000_100
            try TreeFiles.replace(depot.catalogDirectory + "/products.json",
                                  SampleCatalog.sampleAdding(SampleCatalog.product("com.example.depot.gems", title: "Gems")),
                                  modified: Date(timeIntervalSince1970: Double(editTime)))
            #expect(depot.app.reloadCatalog())
            let after = try await Self.all(depot)
            for list in ListPath.allCases {
                #expect(after[list.rawValue]?.etag != before[list.rawValue]?.etag)
                #expect(after[list.rawValue]?.lastModified == Self.httpDate(editTime))
            }
            // A client holding the old validators gets the new list, not a 304.
            for list in ListPath.allCases {
                let old = try #require(before[list.rawValue])
                #expect(try await depot.send("GET", list.rawValue, [("If-None-Match", try #require(old.etag))]).status == 200)
                #expect(try await depot.send("GET", list.rawValue, [("If-Modified-Since", try #require(old.lastModified))]).status == 200)
            }
        }
    }

    @Test func contentOnlyHandEditNeverMovesV2LastModifiedBackwards() async throws {
        // An operator copies a new version of a pack in by hand and bumps `current`; products.json is
        // older than the recorded time (restored from an archive). v2's bytes change (pack version), so a
        // client revalidating with If-Modified-Since must get the new list, not a 304.
        try await withDepot { depot in
            let before = try await depot.validators(.v2)
            let v1Before = try await depot.validators(.v1)
            let content = depot.contentDirectory
            try await TreeFiles.copy(content + "/level2/1", to: content + "/level2/2")
            let manifest = try TreeFiles.text(content + "/level2/2/manifest.json")
                .replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")
                .replacingOccurrences(of: "/v1/packs/level2/1/", with: "/v1/packs/level2/2/")
            try TreeFiles.replace(content + "/level2/2/manifest.json", manifest)
            try TreeFiles.replace(content + "/level2/current", "2\n")
            try TreeFiles.setModified(depot.catalogDirectory + "/products.json", Date(timeIntervalSince1970: 1_500_000_000))
            #expect(depot.app.reloadCatalog())
            let v2 = try await depot.send("GET", ListPath.v2.rawValue)
            #expect(String(decoding: v2.body, as: UTF8.self).contains("\"version\": 2"))
            let after = ListValidators(v2)
            #expect(after.etag != before.etag)
            let oldTime = try #require(before.lastModified.flatMap(HTTPDate.parse))
            let newTime = try #require(after.lastModified.flatMap(HTTPDate.parse))
            #expect(newTime > oldTime, "Last-Modified moved from \(before) to \(after)")
            let revalidated = try await depot.send("GET", ListPath.v2.rawValue, [("If-Modified-Since", try #require(before.lastModified))])
            #expect(revalidated.status == 200)
            // v1 does not depend on packs.
            #expect(try await depot.validators(.v1) == v1Before)
        }
    }

    @Test func handEditWithAnOldFileTimeStillMovesForward() async throws {
        // products.json restored with an mtime older than the record (cp -a from an archive), bytes changed.
        try await withDepot { depot in
            let before = try await Self.all(depot)
            let recorded = try #require(try TreeFiles.recordedTime(catalog: depot.catalogDirectory, list: .v2))
            let edited = SampleCatalog.text.replacingOccurrences(of: "\"Season Pass\"", with: "\"Season Pass 2\"")
            try TreeFiles.replace(depot.catalogDirectory + "/products.json", edited, modified: Date(timeIntervalSince1970: 1_500_000_000))
            #expect(depot.app.reloadCatalog())
            let after = try await Self.all(depot)
            #expect(after[ListPath.v1.rawValue] == before[ListPath.v1.rawValue])
            let newTime = try #require(after[ListPath.v2.rawValue]?.lastModified.flatMap(HTTPDate.parse))
            #expect(newTime > recorded)
            let old = try #require(before[ListPath.v2.rawValue]?.lastModified)
            #expect(try await depot.send("GET", ListPath.v2.rawValue, [("If-Modified-Since", old)]).status == 200)
            // A replica with the same files agrees (the time comes from the files, not from the clock).
            let replica = TemporaryDirectory("depot-replica")
            try await TreeFiles.copy(depot.catalogDirectory, to: replica.path + "/catalog")
            try await TreeFiles.copy(depot.contentDirectory, to: replica.path + "/content")
            #expect(try await withDepot(tree: replica) { try await Self.all($0) } == after)
        }
    }
}
