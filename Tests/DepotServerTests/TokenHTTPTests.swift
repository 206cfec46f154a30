import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import HTTP
import Ledger
import Server
import Synchronization
import Testing

/// spec §4.3 over HTTP: every pack URL checks the token on every request, from the header or the query.
@Suite struct TokenHTTPTests {
    /// The three kinds of pack URL.
    static let targets = ["/v1/packs/testpack/manifest", "/v1/packs/testpack/1/manifest", "/v1/packs/testpack/1/files/range.bin"]

    static func expectError(_ response: RawResponse, _ status: Int, _ code: String) {
        #expect(response.status == status)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
              let error = object["error"] as? [String: Any] else {
            Issue.record("not an error body: \(response.text)")
            return
        }
        #expect(error["code"] as? String == code)
        #expect((error["message"] as? String)?.isEmpty == false)
        // RFC 9110 §11.6.1: every 401 carries a challenge (RFC 6750 §3 form).
        if status == 401 {
            #expect(response.header("WWW-Authenticate") == (code == "token_missing" ? "Bearer" : "Bearer error=\"invalid_token\""))
        } else {
            #expect(response.header("WWW-Authenticate") == nil)
        }
        // A refused request never carries the pack's validators or bytes.
        #expect(response.header("ETag") == nil)
        #expect(response.header("Location") == nil)
    }

    @Test(arguments: targets, ["GET", "HEAD"])
    func missing(_ target: String, method: String) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request(target, credential: .none, method: method)
        if method == "GET" { Self.expectError(response, 401, "token_missing") } else { #expect(response.status == 401) }
    }

    @Test(arguments: targets)
    func emptyTokenIsMissing(_ target: String) async throws {
        let fixture = try await PackFixture.shared.value
        Self.expectError(try fixture.request(target, credential: .query("")), 401, "token_missing")
    }

    @Test(arguments: targets)
    func validInHeaderOrQuery(_ target: String) async throws {
        let fixture = try await PackFixture.shared.value
        let expected = target.hasSuffix("/testpack/manifest") ? 307 : 200
        #expect(try fixture.request(target, credential: .bearer(fixture.token())).status == expected)
        #expect(try fixture.request(target, credential: .query(fixture.token())).status == expected)
        #expect(try fixture.request(target, ["Authorization": "bearer " + fixture.token()], credential: .none).status == expected)
        #expect(try fixture.request(target, ["Authorization": "BEARER " + fixture.token()], credential: .none).status == expected)
    }

    @Test(arguments: targets)
    func expired(_ target: String) async throws {
        let fixture = try await PackFixture.shared.value
        let now = Int64(Date().timeIntervalSince1970)
        Self.expectError(try fixture.request(target, credential: .bearer(fixture.token(expires: now - 1))), 401, "token_expired")
        Self.expectError(try fixture.request(target, credential: .query(fixture.token(expires: now - 86_400))), 401, "token_expired")
    }

    @Test(arguments: targets)
    func wrongPack(_ target: String) async throws {
        let fixture = try await PackFixture.shared.value
        Self.expectError(try fixture.request(target, credential: .bearer(fixture.token(pack: "level2"))), 403, "token_wrong_pack")
        Self.expectError(try fixture.request(target, credential: .query(fixture.token(pack: "testpack2"))), 403, "token_wrong_pack")
    }

    @Test(arguments: targets)
    func signedWithAnotherKey(_ target: String) async throws {
        let fixture = try await PackFixture.shared.value
        let other = DownloadTokenAuthority(key: Array("another-secret-another-secret-another-1".utf8))
        let token = other.issue(DownloadTokenClaims(pack: "testpack", originalTransactionID: "1", account: nil,
                                                    expires: Int64(Date().timeIntervalSince1970) + 600))
        Self.expectError(try fixture.request(target, credential: .bearer(token)), 401, "token_invalid")
    }

    /// One changed character anywhere in the token (payload, separator, signature) → 401 token_invalid.
    @Test(arguments: Array(0..<12))
    func changedCharacter(_ slot: Int) async throws {
        let fixture = try await PackFixture.shared.value
        let token = Array(fixture.token(transaction: "flip").utf8)
        let dot = try #require(token.firstIndex(of: UInt8(ascii: ".")))
        // Spread the positions over the whole token, always including both ends and both sides of the dot.
        let positions = [0, 1, dot / 2, dot - 1, dot, dot + 1, (dot + token.count) / 2, token.count - 2, token.count - 1,
                         dot / 3, dot + (token.count - dot) / 3, token.count - 3]
        let position = positions[slot]
        var changed = token
        changed[position] = changed[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let text = String(decoding: changed, as: UTF8.self)
        for target in Self.targets {
            Self.expectError(try fixture.request(target, credential: .bearer(text)), 401, "token_invalid")
            Self.expectError(try fixture.request(target, credential: .query(text)), 401, "token_invalid")
        }
    }

    struct AuthorizationRow: Sendable, CustomTestStringConvertible {
        let name: String
        /// Header lines, given the valid token.
        let lines: @Sendable (String) -> [String]
        /// Whether the valid token is also sent as `?token=`.
        let query: Bool
        let status: Int
        let code: String?
        var testDescription: String { name }
    }

    static let authorizationRows: [AuthorizationRow] = [
        AuthorizationRow(name: "Basic scheme", lines: { _ in ["Authorization: Basic dXNlcjpwYXNz"] }, query: false,
                         status: 401, code: "token_missing"),
        AuthorizationRow(name: "Basic scheme and a query token", lines: { _ in ["Authorization: Basic dXNlcjpwYXNz"] }, query: true,
                         status: 200, code: nil),
        AuthorizationRow(name: "token without scheme", lines: { ["Authorization: " + $0] }, query: false, status: 401, code: "token_missing"),
        AuthorizationRow(name: "Bearer without token", lines: { _ in ["Authorization: Bearer"] }, query: false, status: 401, code: "token_invalid"),
        AuthorizationRow(name: "Bearer without token and a query token", lines: { _ in ["Authorization: Bearer"] }, query: true,
                         status: 401, code: "token_invalid"),
        AuthorizationRow(name: "two Bearer lines", lines: { ["Authorization: Bearer " + $0, "Authorization: Bearer " + $0] }, query: false,
                         status: 401, code: "token_invalid"),
        AuthorizationRow(name: "Basic and Bearer lines", lines: { ["Authorization: Basic dXNlcjpwYXNz", "Authorization: Bearer " + $0] },
                         query: false, status: 200, code: nil),
        AuthorizationRow(name: "extra spaces after Bearer", lines: { ["Authorization: Bearer    " + $0] }, query: false, status: 200, code: nil),
        AuthorizationRow(name: "a bad Bearer token wins over a good query token", lines: { _ in ["Authorization: Bearer nonsense.token"] },
                         query: true, status: 401, code: "token_invalid"),
    ]

    @Test(arguments: authorizationRows)
    func authorizationField(_ row: AuthorizationRow) async throws {
        let fixture = try await PackFixture.shared.value
        let token = fixture.token()
        let target = fixture.fileURL("range.bin") + (row.query ? "?token=" + token : "")
        let raw = "GET \(target) HTTP/1.1\r\nHost: x\r\n" + row.lines(token).map { $0 + "\r\n" }.joined() + "\r\n"
        let response = try fixture.depot.request(raw)
        if let code = row.code { Self.expectError(response, row.status, code) } else { #expect(response.status == row.status) }
    }

    /// A token in the query travels with other parameters and survives percent-encoding of its characters.
    @Test func queryTokenAmongOtherParameters() async throws {
        let fixture = try await PackFixture.shared.value
        let token = fixture.token()
        let encoded = token.replacingOccurrences(of: ".", with: "%2E")
        #expect(try fixture.request(fixture.fileURL("range.bin") + "?x=1&token=\(encoded)&y=2", credential: .none).status == 200)
        #expect(try fixture.request("/v1/packs/testpack/1/manifest?available=100&token=\(token)", credential: .none).status == 200)
    }

    /// spec §4.6: tokens never appear in logs, whether they came in the query or the header, valid or not.
    @Test func tokensNeverReachTheLog() async throws {
        let fixture = try await PackFixture.shared.value
        let inQuery = fixture.token(transaction: "log-query-\(UUID().uuidString)")
        let inHeader = fixture.token(transaction: "log-header-\(UUID().uuidString)")
        let invalid = "bm9wZQ.log-invalid-\(UUID().uuidString)"
        let path = fixture.fileURL("notes.txt")
        let connection = try fixture.depot.connect()
        for request in [
            "GET \(path)?token=\(inQuery) HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(inHeader)\r\n\r\n",
            "GET \(path)?token=\(invalid) HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /v1/packs/testpack/manifest?token=\(inQuery) HTTP/1.1\r\nHost: x\r\n\r\n",
            // A keep-alive connection logs an exchange before it reads the next request: this one flushes the others.
            "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            connection.send(request)
            _ = try connection.readResponse()
        }
        let lines = fixture.depot.logs.lines
        #expect(lines.filter { $0.contains(path) }.count >= 3)
        for secret in [inQuery, inHeader, invalid] {
            for part in secret.split(separator: ".") where part.count > 8 {
                #expect(!lines.contains { $0.contains(part) }, "a token appears in the log")
            }
        }
    }

    // MARK: - Revocation

    /// A refund recorded in the ledger cuts the token off at once, on every pack URL; a reversal restores it.
    @Test func revokedInTheLedger() async throws {
        let fixture = try await PackFixture.shared.value
        let ledger = try #require(fixture.depot.app.ledger)
        let original = "revoked-\(UUID().uuidString)"
        let token = fixture.token(transaction: original)
        let bystander = fixture.token(transaction: "bystander-\(UUID().uuidString)")
        for target in Self.targets { #expect(try fixture.request(target, credential: .bearer(token)).status < 400) }

        let applied = try await ledger.apply(
            notificationID: UUID().uuidString, type: "REFUND",
            revoke: [LedgerRevocation(transactionID: original, originalTransactionID: original, revokedAt: Date(), reason: "REFUND")],
            restore: [], now: Date())
        #expect(applied)
        for target in Self.targets {
            Self.expectError(try fixture.request(target, credential: .bearer(token)), 403, "revoked")
            Self.expectError(try fixture.request(target, credential: .query(token)), 403, "revoked")
            #expect(try fixture.request(target, credential: .bearer(bystander)).status < 400)
        }
        // The token's own claims are checked before the ledger: an expired token of a revoked purchase says so.
        let now = Int64(Date().timeIntervalSince1970)
        Self.expectError(try fixture.request(Self.targets[2], credential: .bearer(fixture.token(expires: now - 5, transaction: original))),
                         401, "token_expired")

        _ = try await ledger.apply(notificationID: UUID().uuidString, type: "REFUND_REVERSED", revoke: [], restore: [original], now: Date())
        for target in Self.targets { #expect(try fixture.request(target, credential: .bearer(token)).status < 400) }
    }

    /// A purchase moved to another app account (`--account-policy transfer`): the previous account's tokens stop.
    @Test func transferredToAnotherAccount() async throws {
        let fixture = try await PackFixture.shared.value
        let ledger = try #require(fixture.depot.app.ledger)
        let original = "moved-\(UUID().uuidString)"
        let purchase = LedgerPurchase(transactionID: original, originalTransactionID: original, productID: PackFixture.product,
                                      environment: "Sandbox", purchaseDate: Date(), source: .jws)
        let target = fixture.fileURL("range.bin")
        let first = fixture.token(transaction: original, account: "first-account")
        let second = fixture.token(transaction: original, account: "second-account")
        _ = try await ledger.record([purchase], account: "first-account", policy: .transfer, now: Date())
        #expect(try fixture.request(target, credential: .bearer(first)).status == 200)
        _ = try await ledger.record([purchase], account: "second-account", policy: .transfer, now: Date())
        let refused = try fixture.request(target, credential: .bearer(first))
        #expect(refused.status == 403)
        #expect(refused.body != fixture.contents["range.bin"])
        #expect(try fixture.request(target, credential: .bearer(second)).status == 200)
    }

    /// An access checker that refuses chosen transactions and records what it was asked.
    final class StubAccess: AccessChecker {
        let refused: Set<String>
        let asked = Mutex<[String]>([])
        init(refused: Set<String>) { self.refused = refused }
        func isAllowed(originalTransactionID: String, account: String?) -> Bool {
            asked.withLock { $0.append(originalTransactionID + "/" + (account ?? "-")) }
            return !refused.contains(originalTransactionID)
        }
    }

    /// `PackRoutes` on its own, with an injected access checker and clock.
    static func routes(_ fixture: PackFixture, access: any AccessChecker, now: Int64) -> PackRoutes {
        routes(fixture, access: access, clock: { now })
    }

    static func routes(_ fixture: PackFixture, access: any AccessChecker, clock: @escaping @Sendable () -> Int64) -> PackRoutes {
        let paths = DepotPaths(catalogDirectory: fixture.depot.catalogDirectory, contentDirectory: fixture.depot.contentDirectory,
                               dataDirectory: fixture.depot.dataDirectory)
        let store = CatalogStore(paths: paths, cacheControl: "no-cache", logger: Logger(output: LogOutput(capturing: true)))
        #expect(store.reload() == nil)
        return PackRoutes(store: store, tokens: fixture.authority, access: access, now: clock)
    }

    /// A token whose signature a loop has already checked (and cached) still expires on time.
    @Test func aCachedTokenStillExpires() async throws {
        let fixture = try await PackFixture.shared.value
        let start: Int64 = 1_900_000_000
        let clock = Atomic<Int64>(start)
        let routes = Self.routes(fixture, access: AllowAllAccess(), clock: { clock.load(ordering: .relaxed) })
        let token = fixture.token(expires: start + 60)
        let target = "/v1/packs/testpack/1/files/range.bin"
        #expect(try await Self.respond(routes, target, token: token).status == 200)
        #expect(try await Self.respond(routes, target, token: token).status == 200)   // now from the loop's cache
        clock.store(start + 60, ordering: .relaxed)
        #expect(try await Self.respond(routes, target, token: token).status == 401)
    }

    /// `target` answered by a route table holding only `routes`' pack routes (an answer computed off the loop
    /// awaited: a pack file's first open).
    static func respond(_ routes: PackRoutes, _ target: String, token: String) async throws -> Response {
        var fields = HTTPFields()
        fields.append("Authorization", "Bearer " + token)
        let head = RequestHead(method: .get, target: target, fields: fields)
        var builder = RouteTableBuilder()
        DepotRoutes.declare(routes, in: &builder)
        let requestTarget = RequestTarget(target)
        let handling = try builder.build().handle(head, target: requestTarget, segments: try requestTarget.pathSegments(), loop: 0)
        switch handling {
        case .reply(.response(let response)): return response
        case .reply(.later(let work)): return await work()
        default: throw RawHTTPConnection.Failure(description: "not a reply")
        }
    }

    @Test func revokedByTheAccessChecker() async throws {
        let fixture = try await PackFixture.shared.value
        let access = StubAccess(refused: ["refunded"])
        let now: Int64 = 1_900_000_000
        let routes = Self.routes(fixture, access: access, now: now)
        let revoked = fixture.token(expires: now + 60, transaction: "refunded", account: "acc-9")
        let fine = fixture.token(expires: now + 60, transaction: "kept")
        for target in Self.targets {
            let refusedResponse = try await Self.respond(routes, target, token: revoked)
            #expect(refusedResponse.status == 403)
            if case .bytes(let body) = refusedResponse.body {
                #expect(String(decoding: body, as: UTF8.self).contains("\"revoked\""))
            } else {
                Issue.record("no error body")
            }
            #expect(try await Self.respond(routes, target, token: fine).status < 400)
        }
        // The checker is asked with the token's transaction and account.
        #expect(access.asked.withLock { $0.contains("refunded/acc-9") && $0.contains("kept/-") })
    }

    /// The expiry boundary with a fixed clock: valid up to `expires - 1`, refused from `expires` on.
    @Test(arguments: [(Int64(-1), 200), (0, 401), (1, 401)])
    func expiryBoundary(_ offset: Int64, status: Int) async throws {
        let fixture = try await PackFixture.shared.value
        let expires: Int64 = 1_900_000_000
        let routes = Self.routes(fixture, access: AllowAllAccess(), now: expires + offset)
        let response = try await Self.respond(routes, "/v1/packs/testpack/1/files/range.bin", token: fixture.token(expires: expires))
        #expect(response.status == status)
    }
}
