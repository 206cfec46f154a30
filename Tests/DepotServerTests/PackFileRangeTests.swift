import DepotCore
import DepotWire
import DepotServer
import DepotTestSupport
import Foundation
import HTTP
import Testing

/// http-decisions.md "Ranges" on `GET /v1/packs/{pack}/{version}/files/{path}`, row by row, for GET and HEAD.
/// The file is `range.bin`, 1000 bytes (the sizes of the decision table's examples).
@Suite struct PackFileRangeTests {
    static let size = 1000

    enum Outcome: Sendable {
        /// `200` with the whole file.
        case full
        /// `206` with one range: (first, last) inclusive.
        case single(Int, Int)
        /// `206 multipart/byteranges` with these (first, last) parts in this order.
        case multipart([(Int, Int)])
        /// `416` with `Content-Range: bytes */1000`.
        case unsatisfiable
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let range: String
        let outcome: Outcome
        init(_ range: String, _ outcome: Outcome) { self.range = range; self.outcome = outcome }
        var testDescription: String { "Range: \(range) → \(outcome)" }
    }

    static let rows: [Row] = [
        Row("bytes=0-8", .single(0, 8)),
        Row("bytes=-10", .single(990, 999)),
        Row("bytes=990-", .single(990, 999)),
        Row("bytes=0-", .single(0, 999)),
        Row("bytes=999-999", .single(999, 999)),
        Row("bytes=995-5000", .single(995, 999)),                     // last-pos clamped
        Row("bytes=0-99999999999999999999999", .single(0, 999)),      // huge last-pos clamped
        Row("bytes=-5000", .single(0, 999)),                           // suffix longer than the file: all of it, as a 206
        Row("bytes=-1000", .single(0, 999)),
        Row("BYTES=0-8", .single(0, 8)),                               // unit is case-insensitive
        Row("bytes=0-8,", .single(0, 8)),                              // empty list elements ignored
        Row("bytes=-0", .unsatisfiable),                               // Go's 206 here is a known bug
        Row("bytes=1000-", .unsatisfiable),
        Row("bytes=1000-2000", .unsatisfiable),
        Row("bytes=5000-", .unsatisfiable),
        Row("bytes=99999999999999999999999-", .unsatisfiable),
        Row("bytes=abc", .unsatisfiable),
        Row("bytes=7-1", .unsatisfiable),
        Row("bytes=--6", .unsatisfiable),
        Row("bytes=10", .unsatisfiable),
        Row("bytes=1-2 3-4", .unsatisfiable),
        Row("bytes=0-8,abc", .unsatisfiable),                          // one invalid member spoils the header
        Row("bytes=2000-,-0", .unsatisfiable),                         // no member satisfiable
        Row("bytes=", .full),                                          // empty range set: ignored
        Row("bytes= , ", .full),
        Row("items=0-5", .full),                                       // unknown unit: ignored
        Row("0-5", .full),
        Row("bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,22-22,24-24,26-26,28-28,30-30,32-32", .full), // 17 ranges
        Row("bytes=0-10,5-15", .full),                                 // overlapping
        Row("bytes=0-600,-500", .full),                                // overlapping, lengths add up to more than the file
        Row("bytes=0-9,0-9", .full),                                   // the same range twice
        Row("bytes=0-9,20-29", .multipart([(0, 9), (20, 29)])),
        Row("bytes=500-509,0-9", .multipart([(500, 509), (0, 9)])),    // request order kept
        Row("bytes=0-4,5-9", .multipart([(0, 4), (5, 9)])),            // adjacent is allowed
        Row("bytes=0-9,-10", .multipart([(0, 9), (990, 999)])),
        Row("bytes=0-9,1500-,20-29", .multipart([(0, 9), (20, 29)])),  // unsatisfiable member dropped
        Row("bytes=0-9,2000-3000", .single(0, 9)),                     // one satisfiable range is never multipart
        Row("bytes=-0,990-", .single(990, 999)),
        Row("bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,22-22,24-24,26-26,28-28,30-30",
            .multipart((0..<16).map { ($0 * 2, $0 * 2) })),           // 16 ranges: still honoured
    ]

    static func expectCommonFields(_ response: RawResponse, _ fixture: PackFixture, file: PackManifest.File) {
        #expect(response.header("ETag") == file.etag)
        #expect(response.header("Last-Modified") == HTTPDate.format(PackFixture.publishTime))
        #expect(response.header("Cache-Control") == "private, max-age=31536000, immutable")
        #expect(response.header("Accept-Ranges") == "bytes")
        #expect(response.header("Content-Encoding") == nil)
    }

    @Test(arguments: rows)
    func get(_ row: Row) async throws {
        let fixture = try await PackFixture.shared.value
        let file = try fixture.entry("range.bin")
        let bytes = try #require(fixture.contents["range.bin"])
        // Two requests on one connection: the second parses only if the first's Content-Length was exact.
        let connection = try fixture.depot.connect()
        connection.send("GET \(fixture.fileURL("range.bin")) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\nRange: \(row.range)\r\n\r\n")
        let response = try connection.readResponse()
        connection.send("HEAD \(fixture.fileURL("range.bin")) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\n\r\n")
        #expect(try connection.readResponse(isHead: true).status == 200)

        #expect(response.header("Content-Length") == String(response.body.count))
        switch row.outcome {
        case .full:
            #expect(response.status == 200)
            #expect(response.body == bytes)
            #expect(response.header("Content-Range") == nil)
            Self.expectCommonFields(response, fixture, file: file)
        case .single(let first, let last):
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == "bytes \(first)-\(last)/\(Self.size)")
            #expect(response.header("Content-Length") == String(last - first + 1))
            #expect(response.header("Content-Type") == "application/octet-stream")
            #expect(response.body == Array(bytes[first...last]))
            Self.expectCommonFields(response, fixture, file: file)
        case .multipart(let parts):
            #expect(response.status == 206)
            #expect(response.header("Content-Range") == nil)
            Self.expectCommonFields(response, fixture, file: file)
            let type = try #require(response.header("Content-Type"))
            let prefix = "multipart/byteranges; boundary="
            #expect(type.hasPrefix(prefix))
            let boundary = String(type.dropFirst(prefix.count))
            let parsed = try MultipartByteRanges.parse(body: response.body, boundary: boundary)
            #expect(parsed.count == parts.count)
            for (part, (first, last)) in zip(parsed, parts) {
                #expect(part.contentRange == "bytes \(first)-\(last)/\(Self.size)")
                #expect(part.contentType == "application/octet-stream")
                #expect(part.bytes == Array(bytes[first...last]))
            }
        case .unsatisfiable:
            #expect(response.status == 416)
            #expect(response.header("Content-Range") == "bytes */\(Self.size)")
            #expect(response.body.count < 300)
            #expect(response.text.contains("range_not_satisfiable"))
        }
    }

    /// RFC 9110 §14.2: ranges for GET only — HEAD answers with the headers of the full 200.
    @Test(arguments: rows)
    func head(_ row: Row) async throws {
        let fixture = try await PackFixture.shared.value
        let file = try fixture.entry("range.bin")
        let response = try fixture.request(fixture.fileURL("range.bin"), ["Range": row.range], method: "HEAD")
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == String(Self.size))
        #expect(response.header("Content-Range") == nil)
        #expect(response.header("Content-Type") == "application/octet-stream")
        #expect(response.body.isEmpty)
        Self.expectCommonFields(response, fixture, file: file)
    }

    @Test(arguments: ["bytes=0-0", "bytes=-1", "bytes=0-", "bytes=5-", "bytes=-0", "bytes=0-1,3-4", "bytes=abc"])
    func emptyFileWithAnyRangeIsAnEmpty200(_ range: String) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request(fixture.fileURL("empty.bin"), ["Range": range])
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "0")
        #expect(response.header("Content-Range") == nil)
        #expect(response.body.isEmpty)
        #expect(response.header("ETag") == (try fixture.entry("empty.bin")).etag)
    }

    /// More than one Range field line: ignored (a full 200), never a guess.
    @Test func twoRangeFieldLinesAreIgnored() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.depot.request(
            "GET \(fixture.fileURL("range.bin")) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\n"
                + "Range: bytes=0-8\r\nRange: bytes=10-20\r\n\r\n")
        #expect(response.status == 200)
        #expect(response.body == fixture.contents["range.bin"])
    }

    /// RFC 9110 §17.15: thousands of ranges cost no more than 17 — the header is ignored and the full file sent.
    @Test func thousandsOfRangesAreIgnoredCheaply() async throws {
        let fixture = try await PackFixture.shared.value
        let header = "bytes=" + (0..<2500).map { "\($0 % 1000)-\($0 % 1000)" }.joined(separator: ",")
        #expect(header.utf8.count < 30_000)
        let started = Date()
        let response = try fixture.request(fixture.fileURL("range.bin"), ["Range": header])
        #expect(response.status == 200)
        #expect(response.body == fixture.contents["range.bin"])
        // A loose bound (the machine is shared with the other suites): work grows with 17 members at most.
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// A multipart answer over a larger file, its parts streamed from disk across chunk boundaries.
    @Test func multipartAcrossChunksOfALargerFile() async throws {
        let fixture = try await PackFixture.shared.value
        let bytes = try #require(fixture.contents["chunks.bin"])
        let ranges = [(4090, 4100), (0, 4089), (12288, 14335)]
        let header = "bytes=" + ranges.map { "\($0.0)-\($0.1)" }.joined(separator: ",")
        let response = try fixture.request(fixture.fileURL("chunks.bin"), ["Range": header])
        #expect(response.status == 206)
        let type = try #require(response.header("Content-Type"))
        let boundary = String(type.dropFirst("multipart/byteranges; boundary=".count))
        let parts = try MultipartByteRanges.parse(body: response.body, boundary: boundary)
        #expect(parts.map(\.contentRange) == ranges.map { "bytes \($0.0)-\($0.1)/\(bytes.count)" })
        #expect(parts.map(\.bytes) == ranges.map { Array(bytes[$0.0...$0.1]) })
    }

    /// Ranges never come compressed, whatever the client accepts.
    @Test(arguments: ["gzip", "gzip, deflate, br", "*", "identity;q=0, gzip"])
    func rangeIsNeverEncoded(_ acceptEncoding: String) async throws {
        let fixture = try await PackFixture.shared.value
        let bytes = try #require(fixture.contents["notes.txt"])
        let response = try fixture.request(fixture.fileURL("notes.txt"), ["Range": "bytes=0-4", "Accept-Encoding": acceptEncoding])
        #expect(response.status == 206)
        #expect(response.header("Content-Encoding") == nil)
        #expect(response.body == Array(bytes[0...4]))
    }
}
