import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// RFC 9112 §3.2: the forms of a request-target a real server sees. `OPTIONS *` (the asterisk-form) asks about the
/// server in general and is valid; a target with raw bytes outside visible ASCII is malformed (spec §7: `400`,
/// then close), whatever path it would spell.
@Suite struct RequestTargetFormTests {
    /// With the admin API on (its PUT, PATCH and DELETE routes) and off.
    @Test(arguments: [true, false])
    func optionsAsteriskIsAnsweredWithEveryMethodAndKeepsTheConnection(_ admin: Bool) async throws {
        let depot = try await TestDepot.start { if admin { $0.adminToken = "admin-token-for-tests-0123456789" } }
        defer { Task { await depot.stop() } }
        let port = depot.port
        let (options, next) = try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let options = try connection.readResponse()
            connection.send(TestDepot.rawRequest("GET", "/products_v1.json", []))
            return (options, try connection.readResponse())
        }
        #expect(options.status == 200, "\(options.rawHead)")
        let allowed = Set((options.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        // The methods the routes answer: GET and HEAD everywhere, POST for purchases, PUT/PATCH/DELETE in the admin API.
        let expected: Set<String> = admin ? ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] : ["GET", "HEAD", "POST"]
        #expect(allowed == expected, "\(options.rawHead)")
        #expect(!allowed.contains("OPTIONS"))
        #expect(options.header("Content-Length") == "0")
        #expect(options.body.isEmpty)
        #expect(next.status == 200)
    }

    @Test func optionsOnAResourceIsStill405WithItsAllow() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let answer = try await depot.send("OPTIONS", "/products_v1.json")
        #expect(answer.status == 405)
        #expect(answer.header("Allow") == "GET, HEAD")
    }

    @Test(arguments: [
        "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /products_\u{E9}.json HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /products_v1.json?q=caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n",
    ])
    func malformedTargetsAre400ThenClose(_ request: String) async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let port = depot.port
        let (answer, closed) = try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(request)
            let answer = try connection.readResponse()
            return (answer, connection.isClosedByPeer())
        }
        #expect(answer.status == 400, "\(answer.rawHead)")
        #expect(closed)
    }
}
