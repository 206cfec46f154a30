import DepotCore
import DepotCrypto
import DepotTestSupport
import Foundation
import HTTP
import Synchronization
import Testing
import DepotServer

/// spec §2.1, §4.1: edits are served within 2 s without a restart; a malformed catalog never replaces a good one;
/// a request never sees half a catalog.
@Suite struct HotReloadTests {
    static func ids(_ response: RawResponse) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String]) ?? []
    }

    static func json(_ response: RawResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    @Test func anEditIsServedWithinTwoSeconds() async throws {
        try await withDepot { depot in
            let before = try await depot.send("GET", ListPath.v1.rawValue)
            #expect(!Self.ids(before).contains("com.example.depot.gems"))
            // A plain in-place write, as an editor does: no reload call, only the watcher.
            try Data(SampleCatalog.sampleAdding(SampleCatalog.product("com.example.depot.gems", title: "Gems")).utf8)
                .write(to: URL(fileURLWithPath: depot.catalogDirectory + "/products.json"))
            let written = Date()
            // Observed from a dedicated thread with room to spare (the test process is busy with other suites);
            // the 2 s is measured on the server's side, from the write to the swap of the new snapshot.
            let seen = try await eventuallyOnThread(within: 10) {
                Self.ids(try depot.get(ListPath.v1.rawValue)).contains("com.example.depot.gems")
            }
            let swapped = try #require(depot.app.store.lastSwapTime)
            #expect(swapped.timeIntervalSince(written) < 2, "reloaded \(swapped.timeIntervalSince(written)) s after the edit")
            #expect(seen, "the new product is listed within 2 s")
            let v2 = try await depot.send("GET", ListPath.v2.rawValue)
            #expect(String(decoding: v2.body, as: UTF8.self).contains("com.example.depot.gems"))
            let health = Self.json(try await depot.send("GET", "/healthz"))
            #expect((health["catalog"] as? [String: Any])?["products"] as? Int == 5)
            #expect(depot.logRecords.contains { $0.level == "info" && $0.message.hasPrefix("catalog reloaded") })
        }
    }

    struct MalformedRow: Sendable, CustomTestStringConvertible {
        let text: String
        /// Part of the logged and reported reason.
        let reason: String
        var testDescription: String { reason }
    }

    static let malformedRows = [
        MalformedRow(text: "{\"products\": [", reason: "not valid JSON"),
        MalformedRow(text: SampleCatalog.text.replacingOccurrences(of: "\"non-renewing\"", with: "\"gift\""), reason: "products[1].type"),
        MalformedRow(text: SampleCatalog.text.replacingOccurrences(of: "\"pack\": \"level3\"", with: "\"pack\": \"level9\""),
                     reason: "products[3].pack"),
    ]

    @Test(arguments: malformedRows)
    func aMalformedEditKeepsTheLastGoodCatalog(_ row: MalformedRow) async throws {
        try await withDepot { depot in
            let goodV1 = try await depot.send("GET", ListPath.v1.rawValue)
            let goodV2 = try await depot.send("GET", ListPath.v2.rawValue)
            let healthy = try await depot.send("GET", "/healthz")
            #expect(healthy.status == 200)
            try TreeFiles.replace(depot.catalogDirectory + "/products.json", row.text)

            // Issue 11: the last good catalog is served, so the instance stays in rotation: 200, degraded, with why.
            let refused = try await eventuallyOnThread(within: 10) { Self.json(try depot.get("/healthz"))["status"] as? String == "degraded" }
            #expect(refused, "/healthz reports the refused catalog within 2 s")
            let health = try await depot.send("GET", "/healthz")
            #expect(health.status == 200)
            let object = Self.json(health)
            #expect(object["status"] as? String == "degraded")
            #expect((object["reasons"] as? [String])?.first?.contains("reload failed") == true, "\(object)")
            let catalog = try #require(object["catalog"] as? [String: Any])
            #expect((catalog["error"] as? String)?.contains(row.reason) == true, "\(catalog)")
            // The last good catalog is still served, validators included.
            #expect(catalog["products"] as? Int == 4)
            for (list, good) in [(ListPath.v1, goodV1), (ListPath.v2, goodV2)] {
                let response = try await depot.send("GET", list.rawValue)
                #expect(response.status == 200)
                #expect(response.body == good.body)
                #expect(ListValidators(response) == ListValidators(good))
            }
            #expect(depot.logRecords.contains { $0.level == "error" && $0.message.hasPrefix("catalog refused") && $0.message.contains(row.reason) },
                    "\(depot.logs.lines)")

            // Fixing the file recovers.
            try TreeFiles.replace(depot.catalogDirectory + "/products.json",
                                  SampleCatalog.sampleAdding(SampleCatalog.product("com.example.depot.fixed", title: "Fixed")))
            let recovered = try await eventuallyOnThread(within: 10) {
                Self.ids(try depot.get(ListPath.v1.rawValue)).contains("com.example.depot.fixed")
            }
            #expect(recovered)
            let after = try await depot.send("GET", "/healthz")
            #expect(after.status == 200)
            #expect(Self.json(after)["status"] as? String == "ok")
            #expect((Self.json(after)["catalog"] as? [String: Any])?["error"] == nil)
        }
    }

    @Test func aServerStartedOnABrokenCatalogRecovers() async throws {
        let tree = TemporaryDirectory("depot-broken-start")
        try await TestDepot.copySample(into: tree.path)
        try TreeFiles.replace(tree.path + "/catalog/products.json", "not json")
        try await withDepot(tree: tree) { depot in
            #expect(try await depot.send("GET", "/healthz").status == 503)
            let list = try await depot.send("GET", ListPath.v1.rawValue)
            #expect(list.status == 503)
            #expect(list.text.contains("\"error\""))
            try TreeFiles.replace(tree.path + "/catalog/products.json", SampleCatalog.text)
            #expect(try await eventuallyOnThread(within: 10) { try depot.get(ListPath.v1.rawValue).status == 200 })
            #expect(try await depot.send("GET", "/healthz").status == 200)
        }
    }

    @Test func aRequestNeverSeesAMix() async throws {
        try await withDepot { depot in
            let products = depot.catalogDirectory + "/products.json"
            let textA = SampleCatalog.text
            let textB = SampleCatalog.sampleAdding(SampleCatalog.product("com.example.depot.mix", title: "Mix"))
                .replacingOccurrences(of: "\"100 Coins\"", with: "\"101 Coins\"")
            // Fixed mtimes, so each catalog always renders the same bytes.
            let timeA = Date(timeIntervalSince1970: 1_800_000_000)
            let timeB = Date(timeIntervalSince1970: 1_800_000_500)

            // The known (body, ETag) pairs of both catalogs, per list and coding.
            var known: [String: Set<String>] = [:]
            for (text, time) in [(textB, timeB), (textA, timeA)] {
                try TreeFiles.replace(products, text, modified: time)
                #expect(depot.app.reloadCatalog())
                for list in ListPath.allCases {
                    for coding in ["identity", "gzip"] {
                        let response = try await depot.send("GET", list.rawValue, [("Accept-Encoding", coding)])
                        known[list.rawValue + coding, default: []].insert((response.header("ETag") ?? "") + " " + Hex.encode(SHA256.hash(response.body)))
                    }
                }
            }
            #expect(known.values.allSatisfy { $0.count == 2 })

            let port = depot.port
            let state = HammerState()
            let snapshot = known
            let workers = (0..<4).map { worker in
                Task.detached {
                    try await OffPool.run {
                        let connection = try RawHTTPConnection(port: port)
                        var i = 0
                        while !state.stop.load(ordering: .relaxed) {
                            let list = ListPath.allCases[(i + worker) % 2]
                            let coding = (i / 2 + worker) % 2 == 0 ? "identity" : "gzip"
                            connection.send(TestDepot.rawRequest("GET", list.rawValue, [("Accept-Encoding", coding)]))
                            let response = try connection.readResponse()
                            let pair = (response.header("ETag") ?? "") + " " + Hex.encode(SHA256.hash(response.body))
                            if response.status != 200 || !(snapshot[list.rawValue + coding]?.contains(pair) ?? false) {
                                state.unknown.withLock { $0.append("\(list.rawValue) \(coding) \(response.status) \(pair)") }
                            }
                            state.seen.withLock { _ = $0.insert(pair) }
                            state.count.add(1, ordering: .relaxed)
                            i += 1
                        }
                    }
                }
            }
            // Alternate the two catalogs, through both the watcher and explicit reloads.
            for round in 0..<30 {
                let (text, time) = round % 2 == 0 ? (textB, timeB) : (textA, timeA)
                try TreeFiles.replace(products, text, modified: time)
                if round % 3 != 2 { depot.app.reloadCatalog() }
                try await Task.sleep(for: .milliseconds(30))
            }
            state.stop.store(true, ordering: .relaxed)
            for worker in workers { try await worker.value }
            #expect(state.unknown.withLock { $0 }.isEmpty, "\(state.unknown.withLock { $0.prefix(5) })")
            #expect(state.count.load(ordering: .relaxed) > 100)
            // Both catalogs were actually served during the run.
            #expect(state.seen.withLock { $0.count } >= 6)
        }
    }

    /// The watcher holds no reference to its store: a store that stopped watching is freed, thread or not.
    @Test func aStoreThatStoppedWatchingIsFreed() async throws {
        let tree = TemporaryDirectory("watch-free")
        try await TestDepot.copySample(into: tree.path)
        let paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content", dataDirectory: "")
        weak var released: CatalogStore?
        do {
            let store = CatalogStore(paths: paths, cacheControl: "no-cache", logger: Logger(output: LogOutput(capturing: true)),
                                     pollInterval: .seconds(30))
            store.reload()
            store.startWatching()
            released = store
            store.stopWatching()
        }
        // The watcher's thread is still in its 30-second wait; the store must not be held by it.
        #expect(released == nil)
    }
}

/// What the hammering workers share.
final class HammerState: Sendable {
    let stop = Atomic<Bool>(false)
    let count = Atomic<Int>(0)
    /// Responses that were not exactly one of the known (ETag, body) pairs.
    let unknown = Mutex<[String]>([])
    let seen = Mutex<Set<String>>([])
}
