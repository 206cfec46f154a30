import DepotCore
import DepotWire
import DepotTestSupport
import Foundation
import HTTP
import Testing
import DepotServer

/// spec §4.1: what `/products_v1.json` and `/products_v2.json` contain.
@Suite struct ProductListBodyTests {
    static func json(_ response: RawResponse) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(response.body), options: [])
    }

    /// `{id, version, downloadBytes}` of a pack's live version, read from the tree.
    static func livePack(_ content: String, _ pack: String) throws -> (version: Int, downloadBytes: Int) {
        let current = try TreeFiles.text(content + "/\(pack)/current").trimmingCharacters(in: .whitespacesAndNewlines)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: content + "/\(pack)/\(current)/manifest.json")))
        return (Int(current)!, try #require((manifest as? [String: Any])?["downloadBytes"] as? Int))
    }

    @Test func sampleV1IsTheSortedLiveIDs() async throws {
        try await withDepot { depot in
            let response = try await depot.send("GET", "/products_v1.json")
            #expect(response.status == 200)
            #expect(try Self.json(response) as? [String] == [
                "com.example.depot.coins100", "com.example.depot.hints30", "com.example.depot.level2", "com.example.depot.seasonpass",
            ])
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            #expect(response.header("Content-Length") == String(response.body.count))
            #expect(response.header("Server") == "depot")
            #expect(response.header("Date").flatMap(HTTPDate.parse) != nil)
        }
    }

    @Test func sampleV2HasEveryFieldOfTheSpec() async throws {
        try await withDepot { depot in
            let response = try await depot.send("GET", "/products_v2.json")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            let root = try #require(try Self.json(response) as? [String: Any])
            #expect(Set(root.keys) == ["version", "updated", "products"])
            #expect(root["version"] as? Int == 2)
            // `updated` is the list's Last-Modified, in RFC 3339.
            let updated = try #require(root["updated"] as? String)
            #expect(Timestamp.parseRFC3339(updated) == response.header("Last-Modified").flatMap(HTTPDate.parse))
            #expect(Timestamp.rfc3339(Timestamp.parseRFC3339(updated) ?? 0) == updated)

            let products = try #require(root["products"] as? [[String: Any]])
            #expect(products.map { $0["id"] as? String } == [
                "com.example.depot.coins100", "com.example.depot.hints30", "com.example.depot.level2", "com.example.depot.seasonpass",
            ])
            for product in products { #expect(Set(product.keys) == ["id", "type", "title", "description", "pack"]) }
            #expect(products[0]["type"] as? String == "consumable")
            #expect(products[0]["title"] as? String == "100 Coins")
            #expect(products[0]["description"] as? String == "A pouch of coins for the shop.")
            #expect(products[0]["pack"] is NSNull)
            #expect(products[1]["type"] as? String == "non-renewing")
            #expect(products[1]["pack"] is NSNull)
            #expect(products[2]["type"] as? String == "non-consumable")
            #expect(products[2]["title"] as? String == "Level 2: Glacier")
            #expect(products[3]["type"] as? String == "auto-renewable")
            for (index, pack) in [(2, "level2"), (3, "level3")] {
                let object = try #require(products[index]["pack"] as? [String: Any])
                let live = try Self.livePack(depot.contentDirectory, pack)
                #expect(Set(object.keys) == ["id", "version", "downloadBytes"])
                #expect(object["id"] as? String == pack)
                #expect(object["version"] as? Int == live.version)
                #expect(object["downloadBytes"] as? Int == live.downloadBytes)
            }
        }
    }

    @Test func retiredProductsAreNotListedAndOrderIsByID() async throws {
        let tree = TemporaryDirectory("depot-lists")
        try await TestDepot.copySample(into: tree.path)
        try TreeFiles.replace(tree.path + "/catalog/products.json", SampleCatalog.catalog([
            SampleCatalog.product("com.example.z.last", title: "Z"),
            SampleCatalog.product("com.example.depot.level2", type: "non-consumable", title: "L2", pack: "level2", status: "retired"),
            SampleCatalog.product("com.example.B.upper", type: "non-renewing", title: "B"),
            SampleCatalog.product("com.example.a-dash", title: "dash"),
            SampleCatalog.product("com.example.a.dot", type: "auto-renewable", title: "dot", pack: "level3"),
            SampleCatalog.product("com.example.gone", status: "retired"),
        ]))
        try await withDepot(tree: tree) { depot in
            // Bytewise order: '.' (0x2E) after '-' (0x2D), upper case before lower case.
            let expected = ["com.example.B.upper", "com.example.a-dash", "com.example.a.dot", "com.example.z.last"]
            #expect(try Self.json(try await depot.send("GET", "/products_v1.json")) as? [String] == expected)
            let v2 = try #require(try Self.json(try await depot.send("GET", "/products_v2.json")) as? [String: Any])
            let products = try #require(v2["products"] as? [[String: Any]])
            #expect(products.map { $0["id"] as? String } == expected)
            #expect((products[2]["pack"] as? [String: Any])?["id"] as? String == "level3")
            #expect(products[0]["pack"] is NSNull)
            // /healthz counts the live products only.
            let health = try #require(try Self.json(try await depot.send("GET", "/healthz")) as? [String: Any])
            #expect((health["catalog"] as? [String: Any])?["products"] as? Int == 4)
        }
    }

    @Test func emptyCatalogServesEmptyLists() async throws {
        try await withDepot(sample: false) { depot in
            #expect(try Self.json(try await depot.send("GET", "/products_v1.json")) as? [String] == [])
            let v2 = try #require(try Self.json(try await depot.send("GET", "/products_v2.json")) as? [String: Any])
            #expect((v2["products"] as? [Any])?.isEmpty == true)
            #expect(v2["version"] as? Int == 2)
        }
    }

    @Test(arguments: ListPath.allCases)
    func queryStringDoesNotChangeTheList(_ list: ListPath) async throws {
        try await withDepot { depot in
            let plain = try await depot.send("GET", list.rawValue)
            let withQuery = try await depot.send("GET", list.rawValue + "?cb=123")
            #expect(withQuery.status == 200)
            #expect(withQuery.body == plain.body)
            #expect(withQuery.header("ETag") == plain.header("ETag"))
        }
    }

    @Test(arguments: ListPath.allCases)
    func headAnswersWithTheHeadersOfGet(_ list: ListPath) async throws {
        try await withDepot { depot in
            let get = try await depot.send("GET", list.rawValue)
            let bytes = try await depot.sendUntilClose("HEAD", list.rawValue)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.hasSuffix("\r\n\r\n"), "HEAD has no body")
            for name in ["ETag", "Last-Modified", "Cache-Control", "Vary", "Content-Type", "Content-Length"] {
                let value = try #require(get.header(name))
                #expect(text.contains("\(name): \(value)\r\n"), "\(name)")
            }
        }
    }
}
