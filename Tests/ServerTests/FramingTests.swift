import DepotTestSupport
import Foundation
import HTTP
import Server
import Testing

/// One row of http-decisions.md "Framing and robustness", as bytes on the wire.
struct FramingRow: CustomTestStringConvertible, Sendable {
    let name: String
    let request: [UInt8]
    let status: Int

    init(_ name: String, _ request: String, _ status: Int) {
        self.name = name
        self.request = Array(request.utf8)
        self.status = status
    }

    var testDescription: String { name }

    static let refused: [FramingRow] = [
        FramingRow("request line over 8 KiB", "GET /" + String(repeating: "a", count: 8 * 1024) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
        FramingRow("request line of 100 KiB, no LF yet", "GET /" + String(repeating: "a", count: 100 * 1024), 414),
        FramingRow("header block over 32 KiB", "GET /hello HTTP/1.1\r\nHost: t\r\nX: " + String(repeating: "v", count: 32 * 1024) + "\r\n\r\n", 431),
        FramingRow("101 fields", "GET /hello HTTP/1.1\r\nHost: t\r\n" + (1...100).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
        FramingRow("Content-Length twice, different", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        FramingRow("Content-Length twice, same", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400),
        FramingRow("Content-Length list", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3, 3\r\n\r\nabc", 400),
        FramingRow("Content-Length with Transfer-Encoding", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400),
        FramingRow("Transfer-Encoding not ending in chunked", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        FramingRow("Transfer-Encoding in HTTP/1.0", "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400),
        FramingRow("obsolete line folding", "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n", 400),
        FramingRow("space before the colon", "GET /hello HTTP/1.1\r\nHost : t\r\n\r\n", 400),
        FramingRow("control character in a field", "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\u{1}b\r\n\r\n", 400),
        FramingRow("NUL in a field", "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\u{0}b\r\n\r\n", 400),
        FramingRow("bare CR in a field", "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\rb\r\n\r\n", 400),
        FramingRow("missing Host", "GET /hello HTTP/1.1\r\n\r\n", 400),
        FramingRow("malformed request line", "GET /hello\r\nHost: t\r\n\r\n", 400),
        FramingRow("malformed chunked body", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        FramingRow("declared body over the route limit", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 65537\r\n\r\n", 413),
        FramingRow("chunked body over the route limit", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n10001\r\n", 413),
        FramingRow("HTTP/2.0", "GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", 505),
        FramingRow("gzip then chunked", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        FramingRow("flood of empty lines", String(repeating: "\r\n", count: 256 * 1024), 400),
    ]
}

extension ServerTests {
    @Suite("Engine: framing and robustness over loopback")
    struct FramingTests {
        @Test("each refused request gets its status, Connection: close, and the connection ends",
              arguments: FramingRow.refused)
        func refused(row: FramingRow) async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send(row.request)
            let response = try connection.readResponse()
            #expect(response.status == row.status)
            #expect(response.closes)
            #expect(response.header("Content-Type") == "application/json; charset=utf-8", "the application's error shape")
            #expect(connection.isClosedByPeer(timeout: 3), "the connection must be closed after \(row.status)")
            // The server is unharmed.
            #expect(try server.exchange(get("/hello")).status == 200)
            await server.stop()
        }

        @Test("a refused request that keeps sending is still closed (the rest is read and dropped, then EOF)")
        func refusedWhileSending() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 413)
            connection.send([UInt8](repeating: 0x41, count: 200_000))
            #expect(connection.isClosedByPeer(timeout: 4))
            await server.stop()
        }

        @Test("unknown route 404 and wrong method 405 with Allow keep the connection open")
        func routingErrors() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send(get("/nowhere"))
            let notFound = try connection.readResponse()
            #expect(notFound.status == 404)
            #expect(!notFound.closes)
            connection.send("DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let notAllowed = try connection.readResponse()
            #expect(notAllowed.status == 405)
            #expect(notAllowed.header("Allow") == "GET, HEAD")
            connection.send(get("/hello"))
            #expect(try connection.readResponse().text == "hello\n")
            await server.stop()
        }

        @Test("every response carries Date (IMF-fixdate) and Server: depot, and exactly one Content-Length")
        func standardFields() async throws {
            let server = try TestServer()
            for request in [get("/hello"), get("/nowhere"), get("/file"), get("/later?ms=1"),
                            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
                            "GET /hello HTTP/1.1\r\n\r\n", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\n"] {
                let response = try server.exchange(request)
                #expect(response.headers("Server") == ["depot"], "\(response.status)")
                let date = try #require(response.header("Date"))
                let seconds = try #require(HTTPDate.parse(date))
                #expect(abs(seconds - Int64(Date().timeIntervalSince1970)) < 5)
                #expect(response.headers("Content-Length") == ["\(response.body.count)"])
            }
            await server.stop()
        }

        @Test("responses are well-formed: status line, CRLF field lines, no stray bytes")
        func wireFormat() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let (bytes, closed) = connection.readUntilClose()
            #expect(closed)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.hasSuffix("\r\n\r\nhello\n"))
            let head = text.components(separatedBy: "\r\n\r\n")[0]
            #expect(head.split(separator: "\r\n").dropFirst().allSatisfy { $0.contains(": ") })
            #expect(head.contains("\r\nConnection: close"))
            await server.stop()
        }
    }
}
