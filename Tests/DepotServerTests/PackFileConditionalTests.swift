import DepotCore
import DepotWire
import DepotServer
import DepotTestSupport
import Foundation
import HTTP
import Testing

/// http-decisions.md "Conditional requests" and spec §4.4's file headers on pack files.
@Suite struct PackFileConditionalTests {
    /// Placeholders in a row's header values: `E` the file's ETag, `LM` its Last-Modified, `LM±n` shifted by n seconds.
    static func expand(_ value: String, etag: String) -> String {
        let lastModified = PackFixture.publishTime
        var out = value.replacingOccurrences(of: "E", with: etag)
        for (token, shift) in [("LM+1d", 86_400), ("LM-1d", -86_400), ("LM+1", 1), ("LM-1", -1), ("LM", 0)] {
            out = out.replacingOccurrences(of: token, with: HTTPDate.format(lastModified + Int64(shift)))
        }
        return out
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let headers: [String: String]
        let get: Int
        let head: Int
        init(_ headers: [String: String], get: Int, head: Int? = nil) {
            self.headers = headers
            self.get = get
            self.head = head ?? get
        }
        var testDescription: String {
            headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ") + " → GET \(get), HEAD \(head)"
        }
    }

    static let rows: [Row] = [
        // Step 1: If-Match, strong comparison.
        Row(["If-Match": "E"], get: 200),
        Row(["If-Match": "*"], get: 200),
        Row(["If-Match": "\"other\", E"], get: 200),
        Row(["If-Match": "\"other\""], get: 412),
        Row(["If-Match": "W/E"], get: 412),
        // Step 2: If-Unmodified-Since, only without If-Match.
        Row(["If-Unmodified-Since": "LM-1d"], get: 412),
        Row(["If-Unmodified-Since": "LM-1"], get: 412),
        Row(["If-Unmodified-Since": "LM"], get: 200),
        Row(["If-Unmodified-Since": "LM+1d"], get: 200),
        Row(["If-Unmodified-Since": "not a date"], get: 200),
        Row(["If-Match": "E", "If-Unmodified-Since": "LM-1d"], get: 200),
        // Step 3: If-None-Match, weak comparison.
        Row(["If-None-Match": "E"], get: 304),
        Row(["If-None-Match": "W/E"], get: 304),
        Row(["If-None-Match": "*"], get: 304),
        Row(["If-None-Match": "\"a\", E, \"b\""], get: 304),
        Row(["If-None-Match": "\"other\""], get: 200),
        Row(["If-Match": "\"other\"", "If-None-Match": "E"], get: 412),     // step 1 before step 3
        // Step 4: If-Modified-Since (≤, not only equality), ignored with If-None-Match.
        Row(["If-Modified-Since": "LM"], get: 304),
        Row(["If-Modified-Since": "LM+1d"], get: 304),
        Row(["If-Modified-Since": "LM-1"], get: 200),
        Row(["If-Modified-Since": "garbage"], get: 200),
        Row(["If-Modified-Since": "LM", "If-None-Match": "\"other\""], get: 200),
        // Step 5: If-Range (with Range; GET only).
        Row(["Range": "bytes=0-8", "If-Range": "E"], get: 206, head: 200),
        Row(["Range": "bytes=0-8", "If-Range": "\"other\""], get: 200),
        Row(["Range": "bytes=0-8", "If-Range": "W/E"], get: 200),                  // a weak tag never matches
        Row(["Range": "bytes=0-8", "If-Range": "LM"], get: 206, head: 200),        // exact date
        Row(["Range": "bytes=0-8", "If-Range": "Thursday, 28-May-26 20:26:40 GMT"], get: 206, head: 200),  // RFC 850 form
        Row(["Range": "bytes=0-8", "If-Range": "Thu May 28 20:26:40 2026"], get: 206, head: 200),          // asctime form
        Row(["Range": "bytes=0-8", "If-Range": "LM+1"], get: 200),                 // another date
        Row(["Range": "bytes=0-8", "If-Range": "LM-1"], get: 200),
        Row(["Range": "bytes=0-8", "If-Range": "LM+1d"], get: 200),
        Row(["Range": "bytes=0-8", "If-Range": "garbage"], get: 200),
        Row(["Range": "bytes=-0", "If-Range": "\"other\""], get: 200),            // a failed If-Range drops the Range, even an unsatisfiable one
        Row(["If-Range": "E"], get: 200),                                          // without Range: nothing to do
        Row(["Range": "bytes=0-8", "If-None-Match": "E"], get: 304),               // 304 before ranges
        Row(["Range": "bytes=0-8", "If-Match": "\"other\""], get: 412),
    ]

    @Test(arguments: rows, ["GET", "HEAD"])
    func conditional(_ row: Row, method: String) async throws {
        let fixture = try await PackFixture.shared.value
        let file = try fixture.entry("range.bin")
        let bytes = try #require(fixture.contents["range.bin"])
        var headers: [String: String] = [:]
        for (name, value) in row.headers { headers[name] = Self.expand(value, etag: file.etag) }
        let response = try fixture.request(fixture.fileURL("range.bin"), headers, method: method)
        let expected = method == "GET" ? row.get : row.head
        #expect(response.status == expected)
        switch expected {
        case 200:
            #expect(response.header("Content-Length") == "1000")
            #expect(response.header("Content-Range") == nil)
            #expect(response.body == (method == "GET" ? bytes : []))
        case 206:
            #expect(response.header("Content-Range") == "bytes 0-8/1000")
            #expect(response.body == Array(bytes[0...8]))
        case 304:
            // A 304 carries the validators and no body, no Content-Type, no Content-Length, no Content-Encoding.
            #expect(response.header("ETag") == file.etag)
            #expect(response.header("Last-Modified") == HTTPDate.format(PackFixture.publishTime))
            #expect(response.header("Cache-Control") == "private, max-age=31536000, immutable")
            #expect(response.header("Date") != nil)
            #expect(response.header("Content-Type") == nil)
            #expect(response.header("Content-Length") == nil)
            #expect(response.header("Content-Encoding") == nil)
            #expect(response.body.isEmpty)
        case 412:
            #expect(response.text.contains("precondition_failed") || method == "HEAD")
        default:
            break
        }
        if expected == 200 || expected == 206 {
            #expect(response.header("ETag") == file.etag)
            #expect(response.header("Last-Modified") == HTTPDate.format(PackFixture.publishTime))
            #expect(response.header("Cache-Control") == "private, max-age=31536000, immutable")
        }
    }

    // MARK: - Headers of a file

    struct TypeRow: Sendable, CustomTestStringConvertible {
        let path: String
        let contentType: String
        var testDescription: String { "\(path) → \(contentType)" }
    }

    static let typeRows: [TypeRow] = [
        TypeRow(path: "range.bin", contentType: "application/octet-stream"),
        TypeRow(path: "empty.bin", contentType: "application/octet-stream"),
        TypeRow(path: "notes.txt", contentType: "text/plain; charset=utf-8"),
        TypeRow(path: "levels/index.json", contentType: "application/json"),
        TypeRow(path: "art/cover.png", contentType: "image/png"),
        TypeRow(path: "sounds/theme.mp3", contentType: "audio/mpeg"),
        TypeRow(path: "name with space+ñ.dat", contentType: "application/octet-stream"),
        TypeRow(path: "noext", contentType: "application/octet-stream"),
    ]

    @Test(arguments: typeRows, ["GET", "HEAD"])
    func fileHeaders(_ row: TypeRow, method: String) async throws {
        let fixture = try await PackFixture.shared.value
        let file = try fixture.entry(row.path)
        let bytes = try #require(fixture.contents[row.path])
        let response = try fixture.request(file.url, method: method)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == row.contentType)
        #expect(response.header("Content-Length") == String(bytes.count))
        #expect(response.header("ETag") == file.etag)
        #expect(response.header("ETag") == "\"\(file.sha256)\"")
        #expect(response.header("Last-Modified") == HTTPDate.format(PackFixture.publishTime))
        #expect(response.header("Cache-Control") == "private, max-age=31536000, immutable")
        #expect(response.header("Accept-Ranges") == "bytes")
        #expect(response.header("Server") == "depot")
        #expect(response.header("Date") != nil)
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.header("Content-Range") == nil)
        #expect(response.body == (method == "GET" ? bytes : []))
    }

    /// Never a Content-Encoding on a pack file, whatever the client accepts (URLSession adds gzip on its own).
    @Test(arguments: ["gzip", "gzip, deflate", "x-gzip", "*", "br;q=1.0, gzip;q=0.8, *;q=0.1"])
    func neverContentEncoding(_ acceptEncoding: String) async throws {
        let fixture = try await PackFixture.shared.value
        for path in ["notes.txt", "levels/index.json", "range.bin"] {
            let response = try fixture.request(try fixture.entry(path).url, ["Accept-Encoding": acceptEncoding])
            #expect(response.status == 200)
            #expect(response.header("Content-Encoding") == nil)
            #expect(response.body == fixture.contents[path])
            #expect(response.header("ETag") == (try fixture.entry(path)).etag)
        }
    }

    /// A token that expired mid-download does not change the file's validators: a resumed range with
    /// If-Range still applies after getting a fresh token (spec §4.3 `token_expired`).
    @Test func validatorsDoNotDependOnTheToken() async throws {
        let fixture = try await PackFixture.shared.value
        let url = fixture.fileURL("range.bin")
        let first = try fixture.request(url, credential: .bearer(fixture.token(transaction: "a", account: "x")))
        let second = try fixture.request(url, credential: .query(fixture.token(transaction: "b")))
        #expect(first.header("ETag") == second.header("ETag"))
        #expect(first.header("Last-Modified") == second.header("Last-Modified"))
        let expired = try fixture.request(url, credential: .bearer(fixture.token(expires: 1)))
        #expect(expired.status == 401)
        #expect(expired.text.contains("token_expired"))
        let resumed = try fixture.request(url, ["Range": "bytes=500-", "If-Range": try #require(first.header("ETag"))])
        #expect(resumed.status == 206)
        #expect(resumed.body == Array(try #require(fixture.contents["range.bin"])[500...]))
    }
}
