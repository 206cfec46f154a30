import DepotTestSupport
import Foundation
import HTTP
import Testing
import DepotServer

/// spec §4.1 `Accept-Encoding: gzip`, and http-decisions.md: ranges over the list use the bytes actually sent.
@Suite struct ProductListEncodingTests {
    struct NegotiationRow: Sendable, CustomTestStringConvertible {
        /// The `Accept-Encoding` lines (none: the field is absent).
        let acceptEncoding: [String]
        let gzip: Bool
        var testDescription: String {
            (acceptEncoding.isEmpty ? "absent" : acceptEncoding.joined(separator: " | ")) + " → " + (gzip ? "gzip" : "identity")
        }
    }

    static let negotiationRows: [NegotiationRow] = [
        NegotiationRow(acceptEncoding: [], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip"], gzip: true),
        NegotiationRow(acceptEncoding: ["GZIP"], gzip: true),
        NegotiationRow(acceptEncoding: ["x-gzip"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip;q=0"], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip; q=0.000"], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip;q=0.001"], gzip: true),
        NegotiationRow(acceptEncoding: ["*"], gzip: true),
        NegotiationRow(acceptEncoding: ["*;q=0"], gzip: false),
        NegotiationRow(acceptEncoding: ["identity"], gzip: false),
        NegotiationRow(acceptEncoding: [""], gzip: false),
        NegotiationRow(acceptEncoding: ["br"], gzip: false),
        NegotiationRow(acceptEncoding: ["br, gzip;q=0.5"], gzip: true),
        NegotiationRow(acceptEncoding: ["deflate, gzip, br"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip;q=0, *"], gzip: false),
        NegotiationRow(acceptEncoding: ["*;q=0, gzip;q=0.2"], gzip: true),
        NegotiationRow(acceptEncoding: ["br", "gzip"], gzip: true),
        // RFC 9110 §12.5.3: identity (named, or `*` when it is not) with a higher q than gzip's is preferred;
        // an equal q keeps gzip, and an identity not mentioned states no preference.
        NegotiationRow(acceptEncoding: ["gzip;q=0.1, identity;q=0.9"], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip;q=0.5, identity;q=1"], gzip: false),
        NegotiationRow(acceptEncoding: ["identity;q=0.9", "gzip;q=0.1"], gzip: false),
        NegotiationRow(acceptEncoding: ["IDENTITY; q=0.501, gzip; q=0.5"], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip;q=0.5, *"], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip;q=0.5, identity;q=0.5"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip, identity"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip;q=0.9, identity;q=0.1"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip;q=0.5, identity;q=0.9, gzip;q=1"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip;q=0.5, *;q=1, identity;q=0.2"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip;q=0.5"], gzip: true),
        NegotiationRow(acceptEncoding: ["gzip, identity;q=0"], gzip: true),
        NegotiationRow(acceptEncoding: ["identity;q=0"], gzip: false),
        NegotiationRow(acceptEncoding: ["gzip;q=0.0001, identity;q=0.0002"], gzip: false),
    ]

    @Test(arguments: negotiationRows)
    func negotiation(_ row: NegotiationRow) async throws {
        try await withDepot { depot in
            for list in ListPath.allCases {
                let identity = try await depot.send("GET", list.rawValue)
                let response = try await depot.send("GET", list.rawValue, row.acceptEncoding.map { ("Accept-Encoding", $0) })
                #expect(response.status == 200)
                #expect(response.header("Vary") == "Accept-Encoding")
                #expect(response.header("Content-Type") == "application/json; charset=utf-8")
                if row.gzip {
                    #expect(response.header("Content-Encoding") == "gzip", "\(list)")
                    #expect(response.header("ETag") != identity.header("ETag"))
                    #expect(try await Gunzip.decode(response.body) == identity.body)
                } else {
                    #expect(response.header("Content-Encoding") == nil, "\(list)")
                    #expect(response.body == identity.body)
                    #expect(response.header("ETag") == identity.header("ETag"))
                }
            }
        }
    }

    @Test(arguments: ListPath.allCases)
    func eachVariantHasItsOwnStrongETag(_ list: ListPath) async throws {
        try await withDepot { depot in
            let identity = try await depot.send("GET", list.rawValue)
            let gzip = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip")])
            let identityTag = try #require(identity.header("ETag").flatMap { EntityTag(parsing: $0) })
            let gzipTag = try #require(gzip.header("ETag").flatMap { EntityTag(parsing: $0) })
            #expect(!identityTag.isWeak && !gzipTag.isWeak)
            #expect(identityTag.opaqueTag != gzipTag.opaqueTag)
            #expect(gzip.header("Last-Modified") == identity.header("Last-Modified"))
            #expect(gzip.header("Content-Length") == String(gzip.body.count))
            #expect(gzip.body.count < identity.body.count || list == .v1, "v2 compresses")
            // The compressed variant is made once: the same bytes every time.
            let again = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip")])
            #expect(again.body == gzip.body)
            #expect(again.header("ETag") == gzip.header("ETag"))

            // If-None-Match is compared with the selected representation.
            let identityTagText = try #require(identity.header("ETag"))
            let gzipTagText = try #require(gzip.header("ETag"))
            let crossed = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip"), ("If-None-Match", identityTagText)])
            #expect(crossed.status == 200)
            #expect(crossed.header("Content-Encoding") == "gzip")
            #expect(crossed.body == gzip.body)
            let crossedBack = try await depot.send("GET", list.rawValue, [("If-None-Match", gzipTagText)])
            #expect(crossedBack.status == 200)
            #expect(crossedBack.body == identity.body)
            let same = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTagText)])
            #expect(same.status == 304)
            #expect(same.header("ETag") == gzipTagText)
            #expect(same.header("Content-Encoding") == nil)
            let both = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip"), ("If-None-Match", "\(identityTagText), \(gzipTagText)")])
            #expect(both.status == 304)
            // If-Match is compared with the selected representation too.
            let ifMatch = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip"), ("If-Match", identityTagText)])
            #expect(ifMatch.status == 412)
            // The 412 depends on the encoding chosen, so it varies like the 200.
            #expect(ifMatch.header("Vary") == "Accept-Encoding")
        }
    }

    struct RangeRow: Sendable, CustomTestStringConvertible {
        let range: String
        /// Offsets from the start (negative: from the end) of the expected part; nil for a full 200 or a 416.
        let part: (first: Int, last: Int)?
        let status: Int
        var testDescription: String { "\(range) → \(status)" }
    }

    static let rangeRows: [RangeRow] = [
        RangeRow(range: "bytes=0-9", part: (0, 9), status: 206),
        RangeRow(range: "bytes=-5", part: (-5, -1), status: 206),
        RangeRow(range: "bytes=10-", part: (10, -1), status: 206),
        RangeRow(range: "bytes=0-99999", part: (0, -1), status: 206),
        RangeRow(range: "bytes=99999-", part: nil, status: 416),
        RangeRow(range: "bytes=abc", part: nil, status: 416),
        RangeRow(range: "items=0-5", part: nil, status: 200),
    ]

    @Test(arguments: ListPath.allCases, rangeRows)
    func rangesUseTheBytesActuallySent(_ list: ListPath, _ row: RangeRow) async throws {
        try await withDepot { depot in
            for coding in ["identity", "gzip"] {
                let full = try await depot.send("GET", list.rawValue, [("Accept-Encoding", coding)])
                let size = full.body.count
                let response = try await depot.send("GET", list.rawValue, [("Accept-Encoding", coding), ("Range", row.range)])
                #expect(response.status == row.status, "\(coding)")
                switch row.status {
                case 206:
                    let (a, b) = try #require(row.part)
                    let first = a < 0 ? size + a : a
                    let last = b < 0 ? size + b : b
                    #expect(response.header("Content-Range") == "bytes \(first)-\(last)/\(size)", "\(coding)")
                    #expect(Array(response.body) == Array(full.body[first...last]), "\(coding)")
                    #expect(response.header("ETag") == full.header("ETag"), "\(coding): the variant's ETag")
                    #expect(response.header("Last-Modified") == full.header("Last-Modified"))
                    #expect(response.header("Vary") == "Accept-Encoding")
                    #expect(response.header("Content-Encoding") == (coding == "gzip" ? "gzip" : nil))
                case 416:
                    #expect(response.header("Content-Range") == "bytes */\(size)", "\(coding)")
                    // Whether the range fits depends on the encoding: the 416 varies like the 200.
                    #expect(response.header("Vary") == "Accept-Encoding")
                default:
                    #expect(response.body == full.body)
                    #expect(response.header("Content-Range") == nil)
                }
            }
        }
    }

    @Test(arguments: ListPath.allCases)
    func ifRangeSelectsTheVariantsETag(_ list: ListPath) async throws {
        try await withDepot { depot in
            let identity = try await depot.send("GET", list.rawValue)
            let gzip = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip")])
            let matching = try await depot.send("GET", list.rawValue, [
                ("Accept-Encoding", "gzip"), ("Range", "bytes=0-3"), ("If-Range", try #require(gzip.header("ETag"))),
            ])
            #expect(matching.status == 206)
            #expect(matching.body == Array(gzip.body[0...3]))
            // The identity tag is not the gzip variant's: the Range is ignored, the full gzip body is sent.
            let other = try await depot.send("GET", list.rawValue, [
                ("Accept-Encoding", "gzip"), ("Range", "bytes=0-3"), ("If-Range", try #require(identity.header("ETag"))),
            ])
            #expect(other.status == 200)
            #expect(other.body == gzip.body)
            // HEAD never answers a range.
            let head = try await depot.send("HEAD", list.rawValue, [("Range", "bytes=0-3")])
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(identity.body.count))
        }
    }

    struct MultipartRow: Sendable, CustomTestStringConvertible {
        let range: String
        /// (first, last) offsets of the parts expected, in this order; negative: from the end.
        let parts: [(first: Int, last: Int)]
        var testDescription: String { range }
    }

    static let multipartRows: [MultipartRow] = [
        MultipartRow(range: "bytes=0-1,5-6", parts: [(0, 1), (5, 6)]),
        MultipartRow(range: "bytes=-3,0-2", parts: [(-3, -1), (0, 2)]),                 // request order kept
        MultipartRow(range: "bytes=0-1,99999-,4-5", parts: [(0, 1), (4, 5)]),           // unsatisfiable member dropped
    ]

    /// Several ranges of either variant: `206 multipart/byteranges` over the bytes that variant sends, with its
    /// ETag and (gzip) its `Content-Encoding`, as a single range has (http-decisions.md, RFC 9110 §14.6).
    @Test(arguments: ListPath.allCases, multipartRows)
    func multipleRanges(_ list: ListPath, _ row: MultipartRow) async throws {
        try await withDepot { depot in
            for coding in ["identity", "gzip"] {
                let full = try await depot.send("GET", list.rawValue, [("Accept-Encoding", coding)])
                let size = full.body.count
                var requests = [[("Accept-Encoding", coding), ("Range", row.range)]]
                requests.append(requests[0] + [("If-Range", try #require(full.header("ETag")))])
                for fields in requests {
                    let response = try await depot.send("GET", list.rawValue, fields)
                    #expect(response.status == 206, "\(coding) \(fields)")
                    #expect(response.header("ETag") == full.header("ETag"), "\(coding): the variant's ETag")
                    #expect(response.header("Content-Encoding") == full.header("Content-Encoding"), "\(coding)")
                    #expect(response.header("Last-Modified") == full.header("Last-Modified"))
                    #expect(response.header("Vary") == "Accept-Encoding")
                    #expect(response.header("Content-Range") == nil)
                    #expect(response.header("Content-Length") == String(response.body.count))
                    let type = try #require(response.header("Content-Type"))
                    let prefix = "multipart/byteranges; boundary="
                    #expect(type.hasPrefix(prefix))
                    let parsed = try MultipartByteRanges.parse(body: response.body, boundary: String(type.dropFirst(prefix.count)))
                    #expect(parsed.count == row.parts.count, "\(coding)")
                    for (part, (a, b)) in zip(parsed, row.parts) {
                        let first = a < 0 ? size + a : a
                        let last = b < 0 ? size + b : b
                        #expect(part.contentRange == "bytes \(first)-\(last)/\(size)", "\(coding)")
                        #expect(part.contentType == "application/json; charset=utf-8")
                        #expect(part.bytes == Array(full.body[first...last]), "\(coding)")
                    }
                }
            }
        }
    }
}
