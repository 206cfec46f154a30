import Foundation
import Testing
import DepotClient

/// Status + error body → ``DepotClientError`` (spec §4.2, §4.3 tables).
@Suite struct ErrorMappingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func body(_ code: String, _ extra: String = "") -> Data {
        Data("{\"error\": {\"code\": \"\(code)\", \"message\": \"why\"}\(extra)}".utf8)
    }

    static let table: [(Int, Data, String?, String)] = [
        (400, body("bad_request"), nil, "badRequest(bad_request)"),
        (401, body("token_missing"), nil, "tokenMissing"),
        (401, body("token_invalid"), nil, "tokenInvalid"),
        (401, body("token_expired"), nil, "tokenExpired"),
        (403, body("token_wrong_pack"), nil, "tokenWrongPack"),
        (403, body("revoked"), nil, "revoked"),
        (404, body("not_found"), nil, "notFound(not_found)"),
        (413, body("too_large"), nil, "server(413,too_large)"),
        (415, body("unsupported_media_type"), nil, "server(415,unsupported_media_type)"),
        (422, body("receipt_invalid", ", \"appleStatus\": 21010"), nil, "invalidReceipt(21010,nil)"),
        (422, body("receipt_invalid", ", \"check\": \"oid\""), nil, "invalidReceipt(nil,oid)"),
        (422, Data("{\"error\": {\"code\": \"receipt_invalid\", \"message\": \"m\", \"appleStatus\": \"21002\"}}".utf8), nil,
         "invalidReceipt(21002,nil)"),
        (502, body("apple_misconfigured"), nil, "server(502,apple_misconfigured)"),
        (503, body("apple_unavailable"), "12", "retryLater(12)"),
        (503, body("apple_unavailable"), nil, "retryLater(nil)"),
        (503, body("apple_unavailable"), "Fri, 15 Jan 2027 08:00:30 GMT", "retryLater(30)"),
        (503, body("apple_unavailable"), "soon", "retryLater(nil)"),
        (500, Data("<html>".utf8), nil, "server(500,nil)"),
    ]

    @Test(arguments: table)
    func statusAndCodeMapToACase(status: Int, body: Data, retryAfter: String?, expected: String) {
        let error = DepotClientError(status: status, body: body, retryAfter: retryAfter, now: Self.now)
        #expect(Self.summary(error) == expected)
    }

    static func summary(_ error: DepotClientError) -> String {
        switch error {
        case .badRequest(let code, _): "badRequest(\(code))"
        case .tokenMissing: "tokenMissing"
        case .tokenInvalid: "tokenInvalid"
        case .tokenExpired: "tokenExpired"
        case .tokenWrongPack: "tokenWrongPack"
        case .revoked: "revoked"
        case .notFound(let code, _): "notFound(\(code ?? "nil"))"
        case .server(let status, let code, _): "server(\(status),\(code ?? "nil"))"
        case .invalidReceipt(let status, let check): "invalidReceipt(\(status.map(String.init) ?? "nil"),\(check ?? "nil"))"
        case .retryLater(let after): "retryLater(\(after.map { String(Int($0)) } ?? "nil"))"
        default: "\(error)"
        }
    }

    /// RFC 9110 §10.2.3: delay-seconds or an HTTP-date (IMF-fixdate, RFC 850, asctime).
    @Test(arguments: [
        ("120", 120.0),
        ("0", 0.0),
        ("Fri, 15 Jan 2027 08:01:00 GMT", 60.0),
        ("Friday, 15-Jan-27 08:01:00 GMT", 60.0),
        ("Fri Jan 15 08:01:00 2027", 60.0),
        ("Fri, 15 Jan 2027 07:00:00 GMT", 0.0),
    ] as [(String, Double)])
    func retryAfterForms(field: String, seconds: Double) {
        #expect(RetryAfter.seconds(field, now: Self.now) == seconds)
    }

    @Test(arguments: ["", "-5", "1.5", "tomorrow"])
    func retryAfterGarbageIsIgnored(field: String) {
        #expect(RetryAfter.seconds(field, now: Self.now) == nil)
    }
}
