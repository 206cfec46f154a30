import HTTP
import Server
import Testing
import DepotServer

/// The product lists' precomputed answers, chosen from the head's bytes, agree with the full String path on
/// every request they take, and leave the rest to it.
@Suite("Product lists: the byte-level fast path")
struct ProductListFastPathTests {
    static let list = try! ProductList(name: "products_v1.json", body: Array("[\"a\", \"b\"]\n".utf8), lastModified: 1_790_000_000,
                                       cacheControl: "public, no-cache")

    static var identityTag: String { list.identity.etagHeader }
    static var gzipTag: String { list.gzip.etagHeader }

    /// Header lines of a GET or HEAD, and whether the fast path is expected to answer it.
    static let rows: [(method: String, fields: [String], fast: Bool)] = [
        ("GET", [], true),
        ("HEAD", [], true),
        ("GET", ["Accept-Encoding: gzip"], true),
        ("GET", ["Accept-Encoding: br, GZIP;q=0.5"], true),
        ("GET", ["Accept-Encoding: gzip;q=0"], true),
        ("GET", ["Accept-Encoding: *;q=0, x-gzip; Q=0.001"], true),
        ("GET", ["Accept-Encoding: gzip;q=1e3"], false),
        ("GET", ["Accept-Encoding: gzip;q=0.1, identity;q=0.9"], true),
        ("GET", ["Accept-Encoding: gzip;q=0.5, Identity;q=1"], true),
        ("GET", ["Accept-Encoding: gzip;q=0.5, identity;q=0.5"], true),
        ("GET", ["Accept-Encoding: gzip;q=0.5, *"], true),
        ("GET", ["Accept-Encoding: identity;q=0.9", "Accept-Encoding: gzip;q=0.1"], true),
        ("GET", ["Accept-Encoding: gzip;q=0.0001, identity;q=0.0002"], false),
        ("GET", ["Accept-Encoding: br", "Accept-Encoding: gzip"], true),
        ("GET", ["If-None-Match: \(identityTag)"], true),
        ("HEAD", ["If-None-Match: \(identityTag)"], true),
        ("GET", ["Accept-Encoding: gzip", "If-None-Match: \(gzipTag)"], true),
        ("GET", ["Accept-Encoding: gzip", "If-None-Match: \(identityTag)"], false),
        ("GET", ["If-None-Match: \"other\", \(identityTag)"], false),
        ("GET", ["If-None-Match: *"], false),
        ("GET", ["If-Modified-Since: \(HTTPDate.format(1_790_000_000))"], true),
        ("GET", ["If-Modified-Since: \(HTTPDate.format(1_789_999_999))"], true),
        ("GET", ["If-Modified-Since: not a date"], true),
        ("GET", ["If-Modified-Since: \(HTTPDate.format(1_790_000_000))", "If-Modified-Since: x"], true),
        ("GET", ["Range: bytes=0-1"], false),
        ("GET", ["If-Match: \(identityTag)"], false),
        ("GET", ["If-Unmodified-Since: \(HTTPDate.format(1))"], false),
        ("POST", [], false),
    ]

    @Test("every row: the fast answer is the String path's answer, or nil", arguments: 0..<rows.count)
    func agrees(row: Int) throws {
        let (method, fields, fast) = Self.rows[row]
        let text = "\(method) /products_v1.json HTTP/1.1\r\nHost: h\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        let bytes = Array(text.utf8)
        var parser = RequestHeadParser()
        let answers = bytes.withUnsafeBytes { buffer -> (Response?, Response)? in
            guard case .head(let index) = parser.scan(buffer) else { return nil }
            let raw = RawRequestHead(buffer: buffer, index: index)
            return (Self.list.respond(toRaw: raw), Self.list.respond(to: RequestHead(raw)))
        }
        let (quick, full) = try #require(answers)
        #expect((quick != nil) == fast, "\(fields)")
        guard let quick else { return }
        #expect(quick.status == full.status)
        #expect(quick.headers.first("etag") == full.headers.first("etag"))
        #expect(quick.headers.first("content-encoding") == full.headers.first("content-encoding"))
        #expect(quick.body.length == full.body.length)
        #expect(quick.encodedHead != nil, "precomputed as bytes")
    }
}
