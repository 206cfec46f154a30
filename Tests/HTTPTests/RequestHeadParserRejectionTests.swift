import Testing
import HTTP

/// One malformed head and the status it must get.
struct RejectedHead: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let status: Int

    init(_ name: String, _ text: String, _ status: Int = 400) {
        self.name = name
        self.bytes = Array(text.utf8)
        self.status = status
    }

    /// A request line `GET / HTTP/1.1`, `Host: a`, the given field lines, and the empty line.
    static func fields(_ name: String, _ lines: String, _ status: Int = 400) -> RejectedHead {
        RejectedHead(name, "POST / HTTP/1.1\r\nHost: a\r\n" + lines + "\r\n", status)
    }

    var testDescription: String { name }

    /// http-decisions.md "Framing and robustness" and spec §7, one row each.
    static let table: [RejectedHead] = [
        // RFC 9112 §5.2: obsolete line folding.
        .fields("obs-fold with a space", "X: a\r\n b\r\n"),
        .fields("obs-fold with a tab", "X: a\r\n\tb\r\n"),
        // RFC 9112 §5.1: no whitespace between the field name and the colon.
        .fields("space before colon", "Host : b\r\n"),
        .fields("tab before colon", "X\t: b\r\n"),
        // RFC 9110 §5.5: control characters in a field value.
        .fields("NUL in a value", "X: a\u{0}b\r\n"),
        .fields("SOH in a value", "X: a\u{1}b\r\n"),
        .fields("ESC in a value", "X: \u{1B}[31m\r\n"),
        .fields("DEL in a value", "X: a\u{7F}\r\n"),
        .fields("bare CR inside a value", "X: a\rb\r\n"),
        .fields("bare CR at the start of a line", "\rX: b\r\n"),
        .fields("CR CR LF", "X: a\r\r\n"),
        RejectedHead("bare CR in the request line", "GET /a\rb HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("bare CR ends the request line", "GET / HTTP/1.1\rHost: a\r\n\r\n"),
        // RFC 9112 §3.2: a Host field value that is not uri-host [":" port].
        RejectedHead("Host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
        RejectedHead("Host with userinfo", "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n"),
        RejectedHead("Host with a path", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"),
        RejectedHead("Host with a letter in the port", "GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n"),
        RejectedHead("Host with two colons", "GET / HTTP/1.1\r\nHost: a:1:2\r\n\r\n"),
        RejectedHead("Host with an unclosed IPv6 literal", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n"),
        RejectedHead("Host with a bad percent escape", "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n"),
        RejectedHead("Host with non-ASCII", "GET / HTTP/1.1\r\nHost: caf\u{E9}\r\n\r\n"),
        // RFC 9112 §3.2: a request-target has no fragment.
        RejectedHead("fragment in the target", "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("fragment after the query", "GET /a?b=1#c HTTP/1.1\r\nHost: a\r\n\r\n"),
        // RFC 9112 §3.2 and RFC 3986 §2: a request-target is visible ASCII; other bytes are percent-encoded.
        RejectedHead("raw UTF-8 in the path", "GET /products_\u{E9}.json HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("raw UTF-8 in the query", "GET /a?q=caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n"),
        // Malformed field lines.
        .fields("no colon", "NoColon\r\n"),
        .fields("empty name", ": value\r\n"),
        .fields("non-token name", "X(y): z\r\n"),
        .fields("non-ASCII name", "Caf\u{E9}: z\r\n"),
        // RFC 9112 §6.3 and spec §7: Content-Length smuggling.
        .fields("Content-Length twice, same value", "Content-Length: 5\r\nContent-Length: 5\r\n"),
        .fields("Content-Length twice, different values", "Content-Length: 5\r\nContent-Length: 6\r\n"),
        .fields("Content-Length list 5, 5", "Content-Length: 5, 5\r\n"),
        .fields("Content-Length list 5,6", "Content-Length: 5,6\r\n"),
        .fields("Content-Length negative", "Content-Length: -1\r\n"),
        .fields("Content-Length signed", "Content-Length: +5\r\n"),
        .fields("Content-Length hex", "Content-Length: 0x10\r\n"),
        .fields("Content-Length empty", "Content-Length:\r\n"),
        .fields("Content-Length inner space", "Content-Length: 1 2\r\n"),
        .fields("Content-Length 19 digits", "Content-Length: 1000000000000000000\r\n"),
        // RFC 9112 §6.1: Content-Length together with Transfer-Encoding.
        .fields("CL then TE", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"),
        .fields("TE then CL", "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"),
        .fields("CL 0 with TE", "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n"),
        // RFC 9112 §6.3: the final transfer coding must be chunked.
        .fields("TE gzip only", "Transfer-Encoding: gzip\r\n"),
        .fields("TE identity", "Transfer-Encoding: identity\r\n"),
        .fields("TE chunked then gzip", "Transfer-Encoding: chunked, gzip\r\n"),
        .fields("TE chunked then gzip in two fields", "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n"),
        .fields("TE chunked-ish", "Transfer-Encoding: chunkedx\r\n"),
        .fields("TE empty", "Transfer-Encoding:\r\n"),
        .fields("TE only commas", "Transfer-Encoding: , ,\r\n"),
        // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is refused (it cannot be trusted).
        RejectedHead("HTTP/1.0 with TE", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
        // Only chunked is implemented.
        .fields("TE gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n", 501),
        // RFC 9112 §3.2: exactly one Host in 1.1.
        RejectedHead("missing Host", "GET / HTTP/1.1\r\nX: y\r\n\r\n"),
        RejectedHead("no fields at all", "GET / HTTP/1.1\r\n\r\n"),
        RejectedHead("Host twice", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"),
        RejectedHead("Host twice in 1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"),
        // RFC 9112 §2.3 / RFC 9110 §6.2: versions.
        RejectedHead("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        RejectedHead("HTTP/3.0", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
        RejectedHead("HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505),
        RejectedHead("lower-case version", "GET / http/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("two-digit version", "GET / HTTP/1.10\r\nHost: a\r\n\r\n"),
        RejectedHead("no version", "GET /\r\nHost: a\r\n\r\n"),
        RejectedHead("version only", "HTTP/1.1\r\nHost: a\r\n\r\n"),
        // RFC 9112 §3: request-line = method SP request-target SP HTTP-version.
        RejectedHead("double space", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("leading space", " GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("trailing space", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n"),
        RejectedHead("tab separator", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("NUL in the method", "G\u{0}T / HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("NUL in the target", "GET /a\u{0}b HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("DEL in the target", "GET /a\u{7F}b HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("relative target", "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("authority-form for GET", "GET example.com:80 HTTP/1.1\r\nHost: a\r\n\r\n"),
        RejectedHead("unknown scheme", "GET ftp://example.com/a HTTP/1.1\r\nHost: a\r\n\r\n"),
    ]
}

@Suite("Request head parser: refused heads (http-decisions.md \"Framing and robustness\")")
struct RequestHeadParserRejectionTests {
    @Test("malformed heads get their status", arguments: RejectedHead.table)
    func rejected(row: RejectedHead) {
        #expect(headOutcome(parseHeadOnce(row.bytes)) == .failure(row.status))
    }

    @Test("every refusal has a message and one status", arguments: [
        RequestParseError.badRequest("x"), .uriTooLong, .headersTooLarge, .versionNotSupported, .notImplemented("y"),
    ])
    func statuses(error: RequestParseError) {
        #expect([400, 414, 431, 505, 501].contains(error.status))
        #expect(!error.message.isEmpty)
    }

    // A server that buffers an endless run of empty lines can be made to hold any amount of memory.
    @Test("an endless run of empty lines before the request line is refused, not buffered")
    func emptyLineFlood() {
        let flood: [UInt8] = (0..<64 * 1024).map { $0 % 2 == 0 ? 0x0D : 0x0A }
        #expect(headOutcome(parseHeadOnce(flood)) == .failure(400))
        // A few are still ignored.
        let few = Array(String(repeating: "\r\n", count: 8).utf8) + Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        #expect(headOutcome(parseHeadOnce(few)) == .head(method: "GET", target: "/", consumed: few.count))
    }
}
