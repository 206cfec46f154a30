import DepotCore
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// spec §4.4 "Order of checks on every pack URL": a malformed path is `400`; then the token (`401`/`403`);
/// then existence (`404`).
@Suite struct PackURLOrderTests {
    enum Token: String, Sendable, CaseIterable {
        case none, invalid, wrongPack, valid
    }

    static func credential(_ token: Token, _ fixture: PackFixture, pack: String = PackFixture.pack) -> PackFixture.Credential {
        switch token {
        case .none: .none
        case .invalid: .bearer("not.a-token")
        case .wrongPack: .bearer(fixture.token(pack: "level2"))
        case .valid: .bearer(fixture.token(pack: pack))
        }
    }

    static let malformed: [String] = [
        "/v1/packs/.hidden/manifest",
        "/v1/packs/bad*id/manifest",
        "/v1/packs/bad%20id/1/manifest",
        "/v1/packs/testpack/0/manifest",
        "/v1/packs/testpack/01/manifest",
        "/v1/packs/testpack/-1/manifest",
        "/v1/packs/testpack/1.0/manifest",
        "/v1/packs/testpack/9999999999/manifest",
        "/v1/packs/testpack/abc/files/range.bin",
        "/v1/packs/testpack/1/files/",
        "/v1/packs/testpack/1/files/a//b",
        "/v1/packs/testpack/1/files/%2e%2e/range.bin",
        "/v1/packs/../testpack/1/manifest",
        "/v1/packs/testpack/1/files/range.bin%00",
    ]

    @Test(arguments: malformed, Token.allCases)
    func malformedPathIs400BeforeTheToken(_ target: String, token: Token) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request(target, credential: Self.credential(token, fixture))
        #expect(response.status == 400)
        #expect(response.text.contains("\"error\""))
    }

    struct ExistenceRow: Sendable, CustomTestStringConvertible {
        let target: String
        /// The pack a valid token must name.
        let pack: String
        var testDescription: String { target }
    }

    static let missing: [ExistenceRow] = [
        ExistenceRow(target: "/v1/packs/nosuch/manifest", pack: "nosuch"),
        ExistenceRow(target: "/v1/packs/nosuch/1/manifest", pack: "nosuch"),
        ExistenceRow(target: "/v1/packs/nosuch/1/files/range.bin", pack: "nosuch"),
        ExistenceRow(target: "/v1/packs/testpack/99/manifest", pack: "testpack"),
        ExistenceRow(target: "/v1/packs/testpack/99/files/range.bin", pack: "testpack"),
        ExistenceRow(target: "/v1/packs/testpack/1/files/nosuch.bin", pack: "testpack"),
        ExistenceRow(target: "/v1/packs/testpack/1/files/manifest.json", pack: "testpack"),
        ExistenceRow(target: "/v1/packs/testpack/1/files/levels", pack: "testpack"),
        ExistenceRow(target: "/v1/packs/testpack/1/files/RANGE.BIN", pack: "testpack"),
        ExistenceRow(target: "/v1/packs/testpack/1/files/range.bin/more", pack: "testpack"),
    ]

    @Test(arguments: missing)
    func tokenBeforeExistence(_ row: ExistenceRow) async throws {
        let fixture = try await PackFixture.shared.value
        let none = try fixture.request(row.target, credential: .none)
        #expect(none.status == 401)
        #expect(none.text.contains("token_missing"))
        let invalid = try fixture.request(row.target, credential: Self.credential(.invalid, fixture))
        #expect(invalid.status == 401)
        #expect(invalid.text.contains("token_invalid"))
        let wrong = try fixture.request(row.target, credential: .bearer(fixture.token(pack: row.pack == "nosuch" ? "testpack" : "level2")))
        #expect(wrong.status == 403)
        #expect(wrong.text.contains("token_wrong_pack"))
        let valid = try fixture.request(row.target, credential: Self.credential(.valid, fixture, pack: row.pack))
        #expect(valid.status == 404)
        #expect(valid.text.contains("not_found"))
    }

    /// http-decisions.md: preconditions and ranges on a 404 resource are ignored.
    @Test(arguments: [["If-Match": "\"x\""], ["If-None-Match": "*"], ["Range": "bytes=0-1"], ["If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"]])
    func conditionsOnAMissingFileAre404(_ headers: [String: String]) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/files/nosuch.bin", headers)
        #expect(response.status == 404)
    }

    /// Pack URLs answer GET and HEAD only.
    @Test(arguments: ["POST", "PUT", "DELETE"])
    func otherMethods(_ method: String) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.depot.request(
            "\(method) \(fixture.fileURL("range.bin")) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\nContent-Length: 0\r\n\r\n")
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET, HEAD")
    }

    /// A version that is not the live one but not yet pruned still serves (spec §4.4) — and an unknown route shape is a 404.
    @Test func sampleVersionsServe() async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/level2/1/files/README.txt", credential: .bearer(fixture.token(pack: "level2")))
        #expect(response.status == 200)
        #expect(response.body == fixture.depot.tree.read("content/level2/1/README.txt"))
        #expect(try fixture.request("/v1/packs/testpack/1/other").status == 404)
    }
}
