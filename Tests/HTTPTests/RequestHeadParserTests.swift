import Testing
import HTTP

/// What one `parse` call said, in a comparable form.
enum HeadParseOutcome: Equatable, CustomStringConvertible {
    case incomplete
    case head(method: String, target: String, consumed: Int)
    case failure(Int)

    var description: String {
        switch self {
        case .incomplete: "incomplete"
        case .head(let m, let t, let c): "head(\(m) \(t), consumed \(c))"
        case .failure(let status): "failure(\(status))"
        }
    }

    var status: Int? { if case .failure(let s) = self { s } else { nil } }
}

/// Parses `bytes` in one call with a fresh parser.
func parseHeadOnce(_ bytes: [UInt8], limits: HTTPLimits = HTTPLimits()) -> RequestHeadParser.Result {
    var parser = RequestHeadParser(limits: limits)
    return bytes.withUnsafeBytes { parser.parse($0) }
}

func parseHeadOnce(_ text: String, limits: HTTPLimits = HTTPLimits()) -> RequestHeadParser.Result {
    parseHeadOnce(Array(text.utf8), limits: limits)
}

func headOutcome(_ result: RequestHeadParser.Result) -> HeadParseOutcome {
    switch result {
    case .incomplete: .incomplete
    case .head(let head, let consumed): .head(method: head.method.description, target: head.target, consumed: consumed)
    case .failure(let error): .failure(error.status)
    }
}

/// The head, or a test failure.
func parsedHead(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> RequestHead {
    guard case .head(let head, let consumed) = parseHeadOnce(text) else {
        Issue.record("not a complete head: \(headOutcome(parseHeadOnce(text)))", sourceLocation: sourceLocation)
        throw ParseTestFailure()
    }
    #expect(consumed == text.utf8.count, sourceLocation: sourceLocation)
    return head
}

struct ParseTestFailure: Error {}

@Suite("Request head parser: accepted heads (RFC 9112 §2–§6)")
struct RequestHeadParserTests {
    @Test("a minimal HTTP/1.1 request")
    func minimal() throws {
        let head = try parsedHead("GET /hello?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(head.method == .get)
        #expect(head.target == "/hello?x=1")
        #expect(head.path == "/hello")
        #expect(head.minorVersion == 1)
        #expect(head.keepAlive)
        #expect(head.framing == .none)
        #expect(!head.expectsContinue)
    }

    @Test("consumed stops at the end of the head; the rest belongs to the body or the next request")
    func consumedStopsAtHeadEnd() {
        let head = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
        let result = headOutcome(parseHeadOnce(head + "helloGET / HTTP/1.1\r\n"))
        #expect(result == .head(method: "POST", target: "/echo", consumed: head.utf8.count))
    }

    @Test("field names are case-insensitive, values are trimmed of OWS, order and repeats are kept")
    func fields() throws {
        let head = try parsedHead("GET / HTTP/1.1\r\nhOsT: a\r\nX-A:  one \t\r\nX-A:two\r\nX-Empty:\r\nX-Tab: a\tb\r\n\r\n")
        #expect(head.fields.first("Host") == "a")
        #expect(head.fields.values("x-a") == ["one", "two"])
        #expect(head.fields.first("x-empty") == "")
        #expect(head.fields.first("x-tab") == "a\tb")
    }

    @Test("obs-text (bytes 0x80-0xFF) is allowed in a field value")
    func obsText() throws {
        var bytes = Array("GET / HTTP/1.1\r\nHost: a\r\nX: caf".utf8)
        bytes += [0xC3, 0xA9, 0xFF]
        bytes += Array("\r\n\r\n".utf8)
        guard case .head(let head, _) = parseHeadOnce(bytes) else { Issue.record("refused"); return }
        #expect(head.fields.first("x") != nil)
    }

    // RFC 9112 §2.2: a server SHOULD ignore at least one empty line received before the request line.
    @Test("empty lines before the request line are ignored and consumed", arguments: ["\r\n", "\n", "\r\n\r\n", "\n\r\n"])
    func leadingEmptyLines(prefix: String) {
        let text = prefix + "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(headOutcome(parseHeadOnce(text)) == .head(method: "GET", target: "/a", consumed: text.utf8.count))
    }

    // RFC 9112 §2.2: a recipient MAY recognise a single LF as a line terminator.
    @Test("bare LF line endings are accepted")
    func bareLF() throws {
        let head = try parsedHead("GET /a HTTP/1.1\nHost: a\nX: 1\n\n")
        #expect(head.fields.first("x") == "1")
    }

    // RFC 9112 §3.2.2: a server MUST accept the absolute-form.
    @Test("absolute-form targets become origin-form", arguments: [
        ("http://example.com/a/b?x=1", "/a/b?x=1"),
        ("http://example.com:8080/a", "/a"),
        ("HTTPS://EXAMPLE.COM/x", "/x"),
        ("http://example.com", "/"),
        ("http://example.com?q=1", "/?q=1"),
    ])
    func absoluteForm(target: String, expected: String) throws {
        let head = try parsedHead("GET \(target) HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(head.target == expected)
    }

    @Test("valid Host values are accepted (RFC 9112 §3.2, RFC 3986 §3.2.2)", arguments: [
        "a", "", "example.com", "example.com:8080", "127.0.0.1:80", "[::1]", "[::1]:8080", "[v7.fe80::1]",
        "xn--caf-dma.example", "a%20b", "a:", "host_name~x!$&'()*+,;=",
    ])
    func validHosts(_ host: String) throws {
        #expect(try parsedHead("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").fields.first("host") == host)
    }

    @Test("OPTIONS * is the only asterisk-form")
    func asteriskForm() throws {
        #expect(try parsedHead("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").target == "*")
        #expect(headOutcome(parseHeadOnce("GET * HTTP/1.1\r\nHost: a\r\n\r\n")) == .failure(400))
    }

    @Test("methods are case-sensitive tokens", arguments: [
        ("GET", HTTPMethod.get), ("HEAD", .head), ("POST", .post), ("PUT", .put), ("DELETE", .delete),
        ("get", .other("get")), ("PURGE", .other("PURGE")),
    ])
    func methods(name: String, method: HTTPMethod) throws {
        #expect(try parsedHead("\(name) / HTTP/1.1\r\nHost: a\r\n\r\n").method == method)
    }

    @Test("framing derived from the head", arguments: [
        ("Content-Length: 5", BodyFraming.contentLength(5)),
        ("Content-Length: 0", .contentLength(0)),
        ("Content-Length: 000123", .contentLength(123)),
        ("Content-Length: 999999999999999999", .contentLength(999_999_999_999_999_999)),
        ("Transfer-Encoding: chunked", .chunked),
        ("Transfer-Encoding: Chunked", .chunked),
        ("Transfer-Encoding:  chunked ", .chunked),
        ("X-Other: 1", .none),
    ])
    func framing(field: String, framing: BodyFraming) throws {
        #expect(try parsedHead("POST /echo HTTP/1.1\r\nHost: a\r\n\(field)\r\n\r\n").framing == framing)
    }

    @Test("persistence: 1.1 keeps alive unless told to close; 1.0 always closes (spec §4)", arguments: [
        ("HTTP/1.1", "", true),
        ("HTTP/1.1", "Connection: close\r\n", false),
        ("HTTP/1.1", "Connection: keep-alive, Close\r\n", false),
        ("HTTP/1.1", "Connection: keep-alive\r\n", true),
        ("HTTP/1.0", "", false),
        ("HTTP/1.0", "Connection: keep-alive\r\n", false),
    ])
    func persistence(version: String, field: String, keepAlive: Bool) throws {
        let head = try parsedHead("GET / \(version)\r\nHost: a\r\n\(field)\r\n")
        #expect(head.keepAlive == keepAlive)
        #expect(head.minorVersion == (version == "HTTP/1.0" ? 0 : 1))
    }

    @Test("HTTP/1.0 needs no Host")
    func http10WithoutHost() throws {
        #expect(try parsedHead("GET / HTTP/1.0\r\n\r\n").minorVersion == 0)
    }

    @Test("Expect: 100-continue is recognised, case-insensitively", arguments: [
        ("Expect: 100-continue", true), ("Expect: 100-Continue", true), ("Expect: something-else", false),
    ])
    func expectContinue(field: String, expected: Bool) throws {
        let head = try parsedHead("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\(field)\r\n\r\n")
        #expect(head.expectsContinue == expected)
    }

    // RFC 9110 §10.1.1: a server that receives a 100-continue expectation in an HTTP/1.0 request MUST ignore it.
    @Test("Expect: 100-continue in an HTTP/1.0 request is ignored")
    func expectContinueHTTP10() throws {
        let head = try parsedHead("POST /echo HTTP/1.0\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        #expect(!head.expectsContinue)
    }

    @Test("incomplete heads ask for more bytes", arguments: [
        "", "\r\n", "G", "GET / HTTP/1.1", "GET / HTTP/1.1\r", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: a\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n\r", "GET / HTTP/1.1\nHost: a\n",
    ])
    func incomplete(text: String) {
        #expect(headOutcome(parseHeadOnce(text)) == .incomplete)
    }
}
