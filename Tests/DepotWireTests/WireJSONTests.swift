import DepotWire
import Foundation
import Testing

/// `WireJSON`: the one encoder configuration of Depot's bodies: declared key order, `null` versus absent,
/// minimal escapes, one line unless a `WireLayoutKey` breaks it.
@Suite struct WireJSONTests {
    struct Ordered: Encodable {
        var zebra = 1
        var apple: String? = nil
        var middle: [Int] = [1, 2]
        var nested = Nested()
        struct Nested: Encodable { var b = true; var a: Int64 = Int64.min }

        enum CodingKeys: String, CodingKey { case zebra, apple, middle, nested }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(zebra, forKey: .zebra)
            try container.encode(apple, forKey: .apple)
            try container.encode(middle, forKey: .middle)
            try container.encode(nested, forKey: .nested)
        }
    }

    static func text(_ value: some Encodable) throws -> String {
        String(decoding: try WireJSON.encode(value), as: UTF8.self)
    }

    @Test func keysInDeclaredOrderNotSorted() throws {
        #expect(try Self.text(Ordered()) == "{\"zebra\": 1, \"apple\": null, \"middle\": [1, 2], \"nested\": {\"b\": true, \"a\": -9223372036854775808}}\n")
    }

    struct Optionals: Encodable { var present: String? = "x"; var absent: String? = nil }

    @Test func synthesizedOptionalsAreLeftOutWhenNil() throws {
        #expect(try Self.text(Optionals()) == "{\"present\": \"x\"}\n")
        #expect(try Self.text([String]()) == "[]\n")
        #expect(try Self.text([String: Int]()) == "{}\n")
    }

    @Test func stringsUseTheMinimalEscapes() throws {
        #expect(try Self.text(["a\"b\\c/d\n\r\t\u{08}\u{0C}\u{01}\u{1F}é🙂\u{7F}"])
            == "[\"a\\\"b\\\\c/d\\n\\r\\t\\b\\f\\u0001\\u001fé🙂\u{7F}\"]\n")
        #expect(JSONText.string("x\u{00}y") == "\"x\\u0000y\"")
    }

    @Test func nonFiniteNumbersAreRefused() {
        #expect(throws: EncodingError.self) { try WireJSON.encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try WireJSON.encode(["x": Double.infinity]) }
        #expect((try? Self.text([0.5])) == "[0.5]\n")
    }

    /// A stored manifest keeps the layout of every manifest already on disk, byte for byte.
    @Test func manifestLayout() throws {
        let manifest = PackManifest(pack: "p", version: 2, productId: nil, chunkSize: 4, published: "2026-01-02T03:04:05Z", files: [
            .init(path: "a b", size: 5, sha256: "aa", etag: "\"aa\"", url: WirePath.packFile(pack: "p", version: 2, path: "a b"),
                  chunks: [.init(offset: 0, length: 4, sha256: "c1"), .init(offset: 4, length: 1, sha256: "c2")]),
            .init(path: "e", size: 0, sha256: "ee", etag: "\"ee\"", url: "/v1/packs/p/2/files/e", chunks: []),
        ])
        let expected = """
        {"pack": "p", "version": 2, "productId": null,
         "downloadBytes": 5, "chunkSize": 4, "published": "2026-01-02T03:04:05Z",
         "files": [
          {"path": "a b", "size": 5, "sha256": "aa", "etag": "\\"aa\\"", "url": "/v1/packs/p/2/files/a%20b",
           "chunks": [{"offset": 0, "length": 4, "sha256": "c1"}, {"offset": 4, "length": 1, "sha256": "c2"}]},
          {"path": "e", "size": 0, "sha256": "ee", "etag": "\\"ee\\"", "url": "/v1/packs/p/2/files/e",
           "chunks": []}]}

        """
        #expect(try Self.text(manifest) == expected)
        #expect(try WireJSON.decode(PackManifest.self, from: Array(expected.utf8)) == manifest)

        var planned = manifest
        planned.plan = ChunkPlan(availableBytes: 9, reserveBytes: 1, remainingBytes: 5, fits: true,
                                 next: [.init(path: "a b", offset: 0, length: 4)])
        let withPlan = try Self.text(planned)
        #expect(withPlan.hasSuffix("\"chunks\": []}],\n \"plan\": {\"availableBytes\": 9, \"reserveBytes\": 1, \"remainingBytes\": 5, \"fits\": true, \"next\": [{\"path\": \"a b\", \"offset\": 0, \"length\": 4}]}}\n"))
        #expect(try WireJSON.decode(PackManifest.self, from: Array(withPlan.utf8)) == planned)
        #expect(try Self.text(PackManifest(pack: "q", version: 1, productId: "x", chunkSize: 1, files: []))
            == "{\"pack\": \"q\", \"version\": 1, \"productId\": \"x\",\n \"downloadBytes\": 0, \"chunkSize\": 1,\n \"files\": []}\n")
    }

    @Test func purchaseAnswer() throws {
        let entitlement = Entitlement(productId: "level2", pack: "level2", transactionId: "t", originalTransactionId: "o",
                                      purchaseDate: Date(timeIntervalSince1970: 1_800_000_000.9), expiresDate: nil, token: "tok",
                                      tokenExpires: Date(timeIntervalSince1970: 1_800_003_600), manifest: WirePath.packManifest(pack: "level2"))
        let answer = PurchaseAnswer(environment: "Production", entitlements: [entitlement],
                                    rejected: [RejectedPurchase(productId: "coins", transactionId: "c", reason: .noPack)])
        #expect(try Self.text(answer) == """
        {"environment": "Production",
         "entitlements": [
          {"productId": "level2", "pack": "level2", "transactionId": "t", "originalTransactionId": "o", \
        "purchaseDate": "2027-01-15T08:00:00Z", "expiresDate": null, "token": "tok", "tokenExpires": "2027-01-15T09:00:00Z", \
        "manifest": "/v1/packs/level2/manifest"}],
         "rejected": [
          {"productId": "coins", "transactionId": "c", "reason": "no_pack"}]}

        """)
        var whole = answer
        whole.entitlements[0].purchaseDate = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try WireJSON.decode(PurchaseAnswer.self, from: try WireJSON.encode(answer)) == whole)
        // An older or leaner server: missing arrays are empty, a missing manifest path is the pack's.
        let lean = try WireJSON.decode(PurchaseAnswer.self, from: Array("""
            {"entitlements": [{"productId": "p", "pack": "level2", "transactionId": "t", "token": "x"}]}
            """.utf8))
        #expect(lean.rejected.isEmpty && lean.environment == nil)
        #expect(lean.entitlements[0].manifest == "/v1/packs/level2/manifest")
        #expect(lean.entitlements[0].originalTransactionId == "t")
    }

    @Test func errorBody() throws {
        #expect(try Self.text(ErrorBody(code: "receipt_invalid", message: "m", appleStatus: 21003))
            == "{\"error\": {\"code\": \"receipt_invalid\", \"message\": \"m\"}, \"appleStatus\": 21003}\n")
        #expect(try Self.text(ErrorBody(code: "insufficient_storage", message: "m", requiredBytes: 10, freeBytes: 2))
            == "{\"error\": {\"code\": \"insufficient_storage\", \"message\": \"m\"}, \"requiredBytes\": 10, \"freeBytes\": 2}\n")
        // Read leniently: extras inside `error`, and a status as text.
        let inner = try WireJSON.decode(ErrorBody.self, from: Array("{\"error\": {\"code\": \"c\", \"message\": \"m\", \"appleStatus\": \"21002\", \"check\": \"oid\"}}".utf8))
        #expect(inner.appleStatus == 21002 && inner.check == "oid")
        #expect(throws: (any Error).self) { try WireJSON.decode(ErrorBody.self, from: Array("<html>".utf8)) }
    }

    @Test func health() throws {
        var report = HealthReport(catalog: .init(products: 0, updated: nil, error: "bad"),
                                  disk: .init(contentFreeBytes: 1, dataFreeBytes: 2), ledger: .init(status: "ok", backend: "sqlite"))
        #expect(try Self.text(report) == "{\"status\": \"ok\", \"catalog\": {\"products\": 0, \"updated\": null, \"error\": \"bad\"}, "
            + "\"disk\": {\"contentFreeBytes\": 1, \"dataFreeBytes\": 2}, \"ledger\": {\"status\": \"ok\", \"backend\": \"sqlite\"}}\n")
        // A part that is unwell degrades the status and says why; one that cannot serve makes it unavailable, for good.
        report.degrade(because: "the last reload failed")
        #expect(report.status == "degraded" && report.isServing)
        report.fail(because: "the ledger cannot be written")
        report.degrade(because: "later")
        #expect(report.status == "unavailable" && !report.isServing)
        #expect(try Self.text(report).hasPrefix("{\"status\": \"unavailable\", \"reasons\": [\"the last reload failed\", \"the ledger cannot be written\", \"later\"], "))
        #expect(try Self.text(report.summary) == "{\"status\": \"unavailable\"}\n")
        #expect(try WireJSON.decode(HealthReport.self, from: WireJSON.encode(report)) == report)
    }

    @Test func internetDates() {
        let date = Date(timeIntervalSince1970: 1_796_015_010)
        #expect(InternetDate.format(date) == "2026-11-30T05:03:30Z")
        #expect(InternetDate.format(date.addingTimeInterval(0.999)) == "2026-11-30T05:03:30Z")
        #expect(InternetDate.parse("2026-11-30T05:03:30Z") == date)
        #expect(InternetDate.parse("2026-11-30T06:03:30+01:00") == date)
        #expect(InternetDate.parse("2026-11-30T05:03:30.250Z") == date.addingTimeInterval(0.25))
        #expect(InternetDate.parse("yesterday") == nil)
    }
}
