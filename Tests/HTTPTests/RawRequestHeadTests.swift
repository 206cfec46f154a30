import HTTP
import Testing

/// Scans `text` and calls `body` with its raw head (valid only inside `body`).
func withRawHead<R>(_ text: String, _ body: (RawRequestHead) -> R) -> R? {
    let bytes = Array(text.utf8)
    var parser = RequestHeadParser()
    return bytes.withUnsafeBytes { buffer -> R? in
        guard case .head(let index) = parser.scan(buffer) else { return nil }
        return body(RawRequestHead(buffer: buffer, index: index))
    }
}

@Suite("Raw request heads: matching on bytes before any String")
struct RawRequestHeadTests {
    @Test("indexed fields are found whatever their case, counted, and read without surrounding whitespace")
    func indexedFields() throws {
        let text = "GET /products_v1.json HTTP/1.1\r\nhOsT: a\r\nIF-NONE-MATCH:  \"abc\" \r\nAccept-Encoding: gzip\r\n"
            + "accept-encoding: br\r\nX-Other: 1\r\n\r\n"
        let facts = try #require(withRawHead(text) { raw in
            (raw.value(.ifNoneMatch).map { String(decoding: $0, as: UTF8.self) }, raw.occurrences(.acceptEncoding),
             raw.occurrences(.range), raw.value(.host).map { String(decoding: $0, as: UTF8.self) }, raw.index.fieldCount)
        })
        #expect(facts.0 == "\"abc\"")
        #expect(facts.1 == 2)
        #expect(facts.2 == 0)
        #expect(facts.3 == "a")
        #expect(facts.4 == 5)
        let values = withRawHead(text) { raw -> [String] in
            var all: [String] = []
            raw.forEachValue(.acceptEncoding) { all.append(String(decoding: $0, as: UTF8.self)) }
            return all
        }
        #expect(values == ["gzip", "br"])
    }

    @Test("paths compare as bytes; a query does not count; absolute-form targets are their origin-form",
          arguments: [
            ("GET /products_v1.json HTTP/1.1\r\nHost: a\r\n\r\n", "/products_v1.json", true),
            ("GET /products_v1.json?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", "/products_v1.json", true),
            ("GET /products_v1.jsonx HTTP/1.1\r\nHost: a\r\n\r\n", "/products_v1.json", false),
            ("GET /products_v1.jso HTTP/1.1\r\nHost: a\r\n\r\n", "/products_v1.json", false),
            ("GET HTTP://a/products_v1.json HTTP/1.1\r\nHost: a\r\n\r\n", "/products_v1.json", true),
            ("GET http://a?q HTTP/1.1\r\nHost: a\r\n\r\n", "/", true),
            ("GET http://a HTTP/1.1\r\nHost: a\r\n\r\n", "/", true),
            ("GET http://a?q HTTP/1.1\r\nHost: a\r\n\r\n", "/products_v1.json", false),
          ])
    func paths(text: String, literal: String, expected: Bool) throws {
        let matched = try #require(withRawHead(text) { raw in
            literal == "/" ? raw.pathIs("/") : raw.pathIs("/products_v1.json")
        })
        #expect(matched == expected)
    }

    @Test("a raw head copied out is the head parse() gives",
          arguments: [
            "GET /a?b=c HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\n\r\n",
            "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nExpect: 100-Continue\r\n\r\n",
            "POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive, Close\r\n\r\n",
            "GET http://h?only=query HTTP/1.1\r\nHost: h\r\n\r\n",
            "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
          ])
    func copiedOut(text: String) throws {
        let head = try parsedHead(text)
        let copied = try #require(withRawHead(text) { RequestHead($0) })
        #expect(copied.method == head.method)
        #expect(copied.target == head.target)
        #expect(copied.fields.map { "\($0.name)=\($0.value)" } == head.fields.map { "\($0.name)=\($0.value)" })
        #expect(copied.framing == head.framing)
        #expect(copied.keepAlive == head.keepAlive)
        #expect(copied.expectsContinue == head.expectsContinue)
    }

    @Test("the framing facts come from the bytes")
    func framing() throws {
        let facts = try #require(withRawHead("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n") {
            ($0.index.framing, $0.index.expectsContinue, $0.index.keepAlive)
        })
        #expect(facts.0 == .contentLength(12))
        #expect(facts.1)
        #expect(facts.2)
        #expect(withRawHead("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n") { $0.index.keepAlive } == false)
        #expect(withRawHead("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n") { $0.index.expectsContinue } == false)
    }

    @Test("HTTP dates parse from bytes like from strings")
    func dateFromBytes() {
        for value in ["Sun, 06 Nov 1994 08:49:37 GMT", "  Sun Nov  6 08:49:37 1994 ", "Sun, 06 Nov 1994 08:49:37 UTC"] {
            let bytes = Array(value.utf8)
            #expect(bytes.withUnsafeBufferPointer { HTTPDate.parse(bytes: $0) } == HTTPDate.parse(value))
        }
    }
}
