import DepotWire
import Foundation
import Testing
import DepotCore

/// spec §4.1: the bytes of `products_v1.json` and `products_v2.json` as rendered from a catalog.
@Suite struct CatalogListRenderingTests {
    static let catalog = Catalog(products: [
        Product(id: "com.example.zeta", type: .consumable, title: "Zeta", description: "Last by id"),
        Product(id: "com.example.Alpha", type: .nonConsumable, title: "Alpha", description: "Upper case sorts first", pack: "alpha"),
        Product(id: "com.example.retired", type: .nonConsumable, title: "Gone", pack: "alpha", status: .retired),
        Product(id: "com.example.beta", type: .autoRenewable, title: "Beta \"pass\"", description: "", pack: "beta"),
        Product(id: "com.example.beta-2", type: .nonRenewing, title: "Beta 2", description: "d", pack: "nopack"),
    ])
    static let packs = [
        "alpha": PackSummary(id: "alpha", version: 3, downloadBytes: 5_242_880),
        "beta": PackSummary(id: "beta", version: 12, downloadBytes: 0),
    ]
    /// Bytewise order of the live IDs.
    static let sortedLiveIDs = ["com.example.Alpha", "com.example.beta", "com.example.beta-2", "com.example.zeta"]

    static func json(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [])
    }

    @Test func v1IsTheSortedArrayOfLiveIDs() throws {
        let bytes = ProductListRenderer.v1(Self.catalog)
        #expect(try Self.json(bytes) as? [String] == Self.sortedLiveIDs)
        // The form of Apple's guide: a bare array of strings, nothing else.
        #expect(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            == "[" + Self.sortedLiveIDs.map { "\"\($0)\"" }.joined(separator: ", ") + "]")
    }

    @Test func v1OfAnEmptyCatalogIsAnEmptyArray() throws {
        #expect(try Self.json(ProductListRenderer.v1(Catalog(products: []))) as? [String] == [])
        let allRetired = Catalog(products: [Product(id: "x", type: .consumable, title: "X", status: .retired)])
        #expect(try Self.json(ProductListRenderer.v1(allRetired)) as? [String] == [])
    }

    @Test func v2HasTheShapeOfTheSpec() throws {
        let bytes = ProductListRenderer.v2(Self.catalog, packs: Self.packs, updated: "2026-11-30T02:33:58Z")
        let root = try #require(try Self.json(bytes) as? [String: Any])
        #expect(Set(root.keys) == ["version", "updated", "products"])
        #expect(root["version"] as? Int == 2)
        #expect(root["updated"] as? String == "2026-11-30T02:33:58Z")
        let products = try #require(root["products"] as? [[String: Any]])
        #expect(products.map { $0["id"] as? String } == Self.sortedLiveIDs)
        for product in products {
            #expect(Set(product.keys) == ["id", "type", "title", "description", "pack"])
        }
        let alpha = products[0]
        #expect(alpha["type"] as? String == "non-consumable")
        #expect(alpha["title"] as? String == "Alpha")
        #expect(alpha["description"] as? String == "Upper case sorts first")
        let pack = try #require(alpha["pack"] as? [String: Any])
        #expect(Set(pack.keys) == ["id", "version", "downloadBytes"])
        #expect(pack["id"] as? String == "alpha")
        #expect(pack["version"] as? Int == 3)
        #expect(pack["downloadBytes"] as? Int == 5_242_880)
        #expect(products[1]["title"] as? String == "Beta \"pass\"")
        #expect(products[1]["type"] as? String == "auto-renewable")
        #expect((products[1]["pack"] as? [String: Any])?["version"] as? Int == 12)
        // A pack with no live version shows as null, like a product without a pack.
        #expect(products[2]["pack"] is NSNull)
        #expect(products[3]["pack"] is NSNull)
        #expect(products[3]["type"] as? String == "consumable")
    }

    @Test func renderingIsDeterministicAndIndependentOfFileOrder() {
        var shuffled = Self.catalog
        shuffled.products.reverse()
        #expect(ProductListRenderer.v1(shuffled) == ProductListRenderer.v1(Self.catalog))
        #expect(ProductListRenderer.v2(shuffled, packs: Self.packs, updated: "x")
            == ProductListRenderer.v2(Self.catalog, packs: Self.packs, updated: "x"))
    }

    @Test func v1IgnoresEverythingButLiveIDs() {
        var edited = Self.catalog
        edited.products[0].title = "Changed"
        edited.products[1].pack = nil
        edited.products[3].type = .consumable
        #expect(ProductListRenderer.v1(edited) == ProductListRenderer.v1(Self.catalog))
        #expect(ProductListRenderer.v2(edited, packs: Self.packs, updated: "")
            != ProductListRenderer.v2(Self.catalog, packs: Self.packs, updated: ""))
    }

    struct TimestampRow: Sendable, CustomTestStringConvertible {
        let seconds: Int64
        let text: String
        var testDescription: String { "\(seconds) ↔ \(text)" }
    }

    static let timestamps: [TimestampRow] = [
        TimestampRow(seconds: 0, text: "1970-01-01T00:00:00Z"),
        TimestampRow(seconds: 1_796_005_438, text: "2026-11-30T02:23:58Z"),
        TimestampRow(seconds: 951_782_400, text: "2000-02-29T00:00:00Z"),
        TimestampRow(seconds: 4_102_444_799, text: "2099-12-31T23:59:59Z"),
        TimestampRow(seconds: 2_147_483_648, text: "2038-01-19T03:14:08Z"),
        TimestampRow(seconds: 1_709_208_000, text: "2024-02-29T12:00:00Z"),
    ]

    @Test(arguments: timestamps)
    func updatedTimestampRoundTrips(_ row: TimestampRow) {
        #expect(Timestamp.rfc3339(row.seconds) == row.text)
        #expect(Timestamp.parseRFC3339(row.text) == row.seconds)
    }

    @Test(arguments: ["2026-11-30 02:33:58Z", "2026-11-30T02:33:58", "2026-13-01T00:00:00Z", "2026-11-30T02:33:58+01:00", "", "2026-11-30T02:33:58.Z",
                       "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "1900-02-29T00:00:00Z", "2026-11-30T24:00:00Z"])
    func malformedTimestampsAreRefused(_ text: String) {
        #expect(Timestamp.parseRFC3339(text) == nil)
    }

    /// The hand-written lists are exactly the wire types the client decodes (`DepotWire`), so they cannot drift.
    @Test func renderedListsDecodeAsTheWireTypes() throws {
        #expect(try WireJSON.decode(ProductListV1.self, from: ProductListRenderer.v1(Self.catalog)) == Self.sortedLiveIDs)
        let bytes = ProductListRenderer.v2(Self.catalog, packs: Self.packs, updated: "2026-11-30T05:03:30Z")
        let list = try WireJSON.decode(ProductListV2.self, from: bytes)
        #expect(list == ProductListV2(updated: Date(timeIntervalSince1970: 1_796_015_010), products: [
            .init(id: "com.example.Alpha", type: .nonConsumable, title: "Alpha", description: "Upper case sorts first",
                  pack: .init(id: "alpha", version: 3, downloadBytes: 5_242_880)),
            .init(id: "com.example.beta", type: .autoRenewable, title: "Beta \"pass\"", description: "",
                  pack: .init(id: "beta", version: 12, downloadBytes: 0)),
            .init(id: "com.example.beta-2", type: .nonRenewing, title: "Beta 2", description: "d", pack: nil),
            .init(id: "com.example.zeta", type: .consumable, title: "Zeta", description: "Last by id", pack: nil),
        ]))
    }
}
