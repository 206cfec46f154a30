import DepotCore
import DepotWire
import DepotServer
import DepotTestSupport
import Foundation
import HTTP
import Testing

/// spec §4.4: `GET /v1/packs/{pack}/manifest` (307 to the live version) and the versioned manifest with its plan.
@Suite struct PackManifestEndpointTests {
    static let mib: Int64 = 1 << 20

    // MARK: - Redirect

    struct RedirectRow: Sendable, CustomTestStringConvertible {
        let query: String
        let inQuery: Bool
        var testDescription: String { "?\(query) token in \(inQuery ? "query" : "header")" }
    }

    static let redirectRows: [RedirectRow] = [
        RedirectRow(query: "", inQuery: false),
        RedirectRow(query: "", inQuery: true),
        RedirectRow(query: "available=123456789&have=0", inQuery: true),
        RedirectRow(query: "available=123456789&have=0", inQuery: false),
        RedirectRow(query: "x=a+b%20c", inQuery: true),
    ]

    @Test(arguments: redirectRows, ["GET", "HEAD"])
    func redirectToTheLiveVersion(_ row: RedirectRow, method: String) async throws {
        let fixture = try await PackFixture.shared.value
        let token = fixture.token()
        var query = row.query
        if row.inQuery { query += (query.isEmpty ? "" : "&") + "token=" + token }
        let target = "/v1/packs/testpack/manifest" + (query.isEmpty ? "" : "?" + query)
        let response = try fixture.request(target, credential: row.inQuery ? .none : .bearer(token), method: method)
        #expect(response.status == 307)
        let expected = "/v1/packs/testpack/1/manifest" + (query.isEmpty ? "" : "?" + query)
        #expect(response.header("Location") == expected)
        #expect(response.header("Location")?.contains("token=") == row.inQuery)
        #expect(response.body.isEmpty)

        // Following it with the same credential gives the manifest.
        let followed = try fixture.request(expected, credential: row.inQuery ? .none : .bearer(token), method: method)
        #expect(followed.status == 200)
        #expect(followed.header("Content-Type") == "application/json; charset=utf-8")
    }

    @Test func redirectFollowsTheSampleLiveVersion() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/level2/manifest", credential: .bearer(fixture.token(pack: "level2")))
        #expect(response.status == 307)
        #expect(response.header("Location") == "/v1/packs/level2/1/manifest")
    }

    // MARK: - Versioned manifest

    @Test func manifestIsTheStoredManifest() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/manifest")
        #expect(response.status == 200)
        #expect(response.body == fixture.depot.tree.read("content/testpack/1/manifest.json"))
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        #expect(response.header("Cache-Control") == "private, no-cache")
        #expect(response.header("Content-Encoding") == nil)
        let etag = try #require(response.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))  // strong
        #expect(etag != (try fixture.entry("range.bin")).etag)
        #expect(response.header("Last-Modified") == HTTPDate.format(PackFixture.publishTime))
    }

    /// The shape of spec §4.4, field by field, with JSON types; each file URL fetches that file.
    @Test func manifestShape() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/manifest")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        // The spec's fields, plus `published` (the publish time, the files' Last-Modified; a documented addition) and
        // `chunking` (pack-updates.md §1).
        #expect(Set(object.keys) == ["pack", "version", "productId", "downloadBytes", "chunkSize", "chunking", "files", "published"])
        let chunking = try #require(object["chunking"] as? [String: Any])
        #expect(chunking["method"] as? String == "fixed" && (chunking["size"] as? NSNumber)?.intValue == 4096 && chunking.count == 2)
        #expect(object["pack"] as? String == "testpack")
        #expect((object["version"] as? NSNumber)?.intValue == 1)
        #expect(object["productId"] as? String == PackFixture.product)
        #expect((object["chunkSize"] as? NSNumber)?.int64Value == PackFixture.chunkSize)
        let total = fixture.contents.values.reduce(0) { $0 + $1.count }
        #expect((object["downloadBytes"] as? NSNumber)?.int64Value == Int64(total))
        #expect(object["published"] as? String == Timestamp.rfc3339(PackFixture.publishTime))
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == fixture.contents.count)
        for file in files {
            #expect(Set(file.keys) == ["path", "size", "sha256", "etag", "url", "chunks"])
            let path = try #require(file["path"] as? String)
            let bytes = try #require(fixture.contents[path])
            #expect((file["size"] as? NSNumber)?.int64Value == Int64(bytes.count))
            let sha = try #require(file["sha256"] as? String)
            #expect(file["etag"] as? String == "\"\(sha)\"")
            let chunks = try #require(file["chunks"] as? [[String: Any]])
            #expect(chunks.count == (bytes.count + 4095) / 4096)
            for chunk in chunks { #expect(Set(chunk.keys) == ["offset", "length", "sha256"]) }
            let url = try #require(file["url"] as? String)
            let fetched = try fixture.request(url)
            #expect(fetched.status == 200, "\(url)")
            #expect(fetched.body == bytes)
            #expect(fetched.header("ETag") == file["etag"] as? String)
        }
    }

    @Test(arguments: ["GET", "HEAD"])
    func manifestRevalidates(_ method: String) async throws {
        let fixture = try await PackFixture.shared.value
        let first = try fixture.request("/v1/packs/testpack/1/manifest")
        let etag = try #require(first.header("ETag"))
        for value in [etag, "W/" + etag, "\"x\", " + etag, "*"] {
            let again = try fixture.request("/v1/packs/testpack/1/manifest", ["If-None-Match": value], method: method)
            #expect(again.status == 304, "\(value)")
            #expect(again.header("ETag") == etag)
            #expect(again.header("Cache-Control") == "private, no-cache")
            #expect(again.body.isEmpty)
        }
        let fileTag = try fixture.entry("range.bin").etag
        #expect(try fixture.request("/v1/packs/testpack/1/manifest", ["If-None-Match": fileTag], method: method).status == 200)
        let head = try fixture.request("/v1/packs/testpack/1/manifest", method: "HEAD")
        #expect(head.header("Content-Length") == String(first.body.count))
        #expect(head.header("ETag") == etag)
    }

    /// The manifest is a byte representation like any other: single and multiple ranges, If-Range with its own tag.
    @Test func manifestRanges() async throws {
        let fixture = try await PackFixture.shared.value
        let stored = try #require(fixture.depot.tree.read("content/testpack/1/manifest.json"))
        let etag = try #require(try fixture.request("/v1/packs/testpack/1/manifest").header("ETag"))
        let single = try fixture.request("/v1/packs/testpack/1/manifest", ["Range": "bytes=10-19", "If-Range": etag])
        #expect(single.status == 206)
        #expect(single.body == Array(stored[10...19]))
        #expect(single.header("Content-Range") == "bytes 10-19/\(stored.count)")
        let stale = try fixture.request("/v1/packs/testpack/1/manifest", ["Range": "bytes=10-19", "If-Range": "\"stale\""])
        #expect(stale.status == 200)
        #expect(stale.body == stored)
        let multi = try fixture.request("/v1/packs/testpack/1/manifest", ["Range": "bytes=0-4,-5"])
        #expect(multi.status == 206)
        let type = try #require(multi.header("Content-Type"))
        let parts = try MultipartByteRanges.parse(body: multi.body, boundary: String(type.dropFirst("multipart/byteranges; boundary=".count)))
        #expect(parts.map(\.bytes) == [Array(stored[0...4]), Array(stored.suffix(5))])
        #expect(parts.map(\.contentType) == ["application/json; charset=utf-8", "application/json; charset=utf-8"])
    }

    // MARK: - Plan over HTTP

    /// The plan added by `?available=`: exactly the spec's fields, the values of `ChunkPlan` for that manifest.
    @Test(arguments: [
        (Int64(16 << 20) + 8192, Int64(300)),             // after art/cover.png: two chunks of chunks.bin fit
        (Int64(16 << 20) + 8192, Int64(300 + 14336)),     // at a file boundary before an empty file: the rest fits
        (Int64(16 << 20) + 100, Int64(0)),                // no chunk fits
        (Int64(0), Int64(0)),
        (Int64(1) << 40, Int64(0)),                       // everything fits, 2 % reserve
        (Int64(0), Int64(-1)),                            // `have` left out
    ])
    func plan(_ available: Int64, have: Int64) async throws {
        let fixture = try await PackFixture.shared.value
        let target = "/v1/packs/testpack/1/manifest?available=\(available)" + (have >= 0 ? "&have=\(have)" : "")
        let response = try fixture.request(target)
        #expect(response.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let plan = try #require(object["plan"] as? [String: Any])
        #expect(Set(plan.keys) == ["availableBytes", "reserveBytes", "remainingBytes", "fits", "next"])
        let expected = try ChunkPlan.make(manifest: fixture.manifest, available: available, have: max(0, have))
        #expect((plan["availableBytes"] as? NSNumber)?.int64Value == available)
        #expect((plan["reserveBytes"] as? NSNumber)?.int64Value == max(16 << 20, available / 50))
        #expect((plan["remainingBytes"] as? NSNumber)?.int64Value == fixture.manifest.downloadBytes - max(0, have))
        #expect(plan["fits"] as? Bool == expected.fits)
        let next = try #require(plan["next"] as? [[String: Any]])
        #expect(next.count == expected.next.count)
        for (step, want) in zip(next, expected.next) {
            #expect(Set(step.keys) == ["path", "offset", "length"])
            #expect(step["path"] as? String == want.path)
            #expect((step["offset"] as? NSNumber)?.int64Value == want.offset)
            #expect((step["length"] as? NSNumber)?.int64Value == want.length)
        }
        // The rest of the object is the manifest unchanged.
        var withoutPlan = object
        withoutPlan["plan"] = nil
        let stored = try #require(try JSONSerialization.jsonObject(with: Data(fixture.depot.tree.read("content/testpack/1/manifest.json")!)) as? NSDictionary)
        #expect(NSDictionary(dictionary: withoutPlan).isEqual(stored))
        #expect(response.header("Cache-Control") == "private, no-cache")
    }

    /// Hand-checked values for one plan: after art/cover.png, 8 KiB over the reserve.
    @Test func planValues() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/manifest?available=\((16 << 20) + 8192)&have=300")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let plan = try #require(object["plan"] as? [String: Any])
        #expect(plan["fits"] as? Bool == false)
        let next = try #require(plan["next"] as? [[String: Any]])
        #expect(next.map { $0["path"] as? String } == ["chunks.bin", "chunks.bin"])
        #expect(next.map { ($0["offset"] as? NSNumber)?.intValue } == [0, 4096])
        #expect(next.map { ($0["length"] as? NSNumber)?.intValue } == [4096, 4096])
        #expect(response.text.contains("\"fits\": false"))
    }

    /// The answer to `?available=` is the wire manifest with its plan, byte for byte what encoding
    /// `PackManifest` with `plan` set gives (the server only appends the plan to the stored bytes).
    @Test func planAnswerIsTheWireManifestWithPlan() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/manifest?available=\((16 << 20) + 8192)&have=300")
        var expected = fixture.manifest
        expected.plan = try ChunkPlan.make(manifest: fixture.manifest, available: (16 << 20) + 8192, have: 300)
        #expect(try WireJSON.decode(PackManifest.self, from: response.body) == expected)
        #expect(try response.body == expected.encoded())
        #expect(try PackRoutes.adding(try #require(expected.plan), to: fixture.manifest.encoded()) == expected.encoded())
    }

    @Test func planHasItsOwnETag() async throws {
        let fixture = try await PackFixture.shared.value
        let plain = try fixture.request("/v1/packs/testpack/1/manifest")
        let a = try fixture.request("/v1/packs/testpack/1/manifest?available=0")
        let b = try fixture.request("/v1/packs/testpack/1/manifest?available=\(1 << 40)")
        let tags = [plain, a, b].compactMap { $0.header("ETag") }
        #expect(Set(tags).count == 3)
        let again = try fixture.request("/v1/packs/testpack/1/manifest?available=0", ["If-None-Match": try #require(a.header("ETag"))])
        #expect(again.status == 304)
        // The plain manifest's tag does not validate a planned body.
        let stale = try fixture.request("/v1/packs/testpack/1/manifest?available=0", ["If-None-Match": try #require(plain.header("ETag"))])
        #expect(stale.status == 200)
    }

    struct BadQueryRow: Sendable, CustomTestStringConvertible {
        let query: String
        var testDescription: String { query }
    }

    static let badQueries: [BadQueryRow] = [
        "available=", "available=-1", "available=%2D1", "available=abc", "available=1e9", "available=1.5", "available=+5",
        "available=0x10", "available=5&have=1", "available=5&have=-4096",
        "available=5&have=abc", "available=5&have=", "available=5&have=999999999", "available=5&have=4096",
    ].map(BadQueryRow.init)

    @Test(arguments: badQueries)
    func badPlanQueryIs400(_ row: BadQueryRow) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/manifest?" + row.query)
        #expect(response.status == 400)
        #expect(response.text.contains("bad_request"))
        #expect(!response.text.contains("\"files\""))
    }

    /// `have` on a chunk boundary that is also the end: remaining 0, nothing next.
    @Test func haveEqualsDownloadBytes() async throws {
        let fixture = try await PackFixture.shared.value
        let total = fixture.manifest.downloadBytes
        let response = try fixture.request("/v1/packs/testpack/1/manifest?available=0&have=\(total)")
        #expect(response.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let plan = try #require(object["plan"] as? [String: Any])
        #expect((plan["remainingBytes"] as? NSNumber)?.intValue == 0)
        #expect((plan["next"] as? [Any])?.isEmpty == true)
        #expect(plan["fits"] as? Bool == true)
    }

    /// Without `available`, `have` alone adds no plan (the manifest is served as stored).
    @Test func haveAloneAddsNoPlan() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/manifest?have=300")
        #expect(response.status == 200)
        #expect(response.body == fixture.depot.tree.read("content/testpack/1/manifest.json"))
    }
}
