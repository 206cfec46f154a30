import DepotServer
import DepotTestSupport
import Foundation
import Testing
import AppStoreSimulator

/// What `POST /v1/receipts` does with bodies it cannot use (spec §4.2 errors, §7): a clear `4xx`, Apple is
/// never asked, and the server keeps serving.
@Suite struct PurchaseRequestBodyTests {
    struct BadBody: Sendable, CustomTestStringConvertible {
        var name: String
        var body: String
        var testDescription: String { name }
    }

    static let badBodies: [BadBody] = [
        BadBody(name: "not JSON", body: "{\"receipt\": "),
        BadBody(name: "empty body", body: ""),
        BadBody(name: "a JSON array", body: "[\"eyJhIjoxfQ==\"]"),
        BadBody(name: "a JSON string", body: "\"eyJhIjoxfQ==\""),
        BadBody(name: "neither receipt nor transactions", body: "{\"account\": \"a-1\"}"),
        BadBody(name: "both receipt and transactions", body: "{\"receipt\": \"eyJhIjoxfQ==\", \"transactions\": [\"a.b.c\"]}"),
        BadBody(name: "receipt not base64", body: "{\"receipt\": \"this is *not* base64!\"}"),
        BadBody(name: "receipt base64 of the wrong length", body: "{\"receipt\": \"eyJhIjoxfQ=\"}"),
        BadBody(name: "receipt empty", body: "{\"receipt\": \"\"}"),
        BadBody(name: "receipt a number", body: "{\"receipt\": 12345}"),
        BadBody(name: "receipt null", body: "{\"receipt\": null}"),
        BadBody(name: "transactions a string", body: "{\"transactions\": \"a.b.c\"}"),
        BadBody(name: "transactions empty", body: "{\"transactions\": []}"),
        BadBody(name: "transactions holding a number", body: "{\"transactions\": [1]}"),
        BadBody(name: "account a number", body: "{\"receipt\": \"eyJhIjoxfQ==\", \"account\": 7}"),
        BadBody(name: "account empty", body: "{\"receipt\": \"eyJhIjoxfQ==\", \"account\": \"\"}"),
        BadBody(name: "account over 256 bytes",
                body: "{\"receipt\": \"eyJhIjoxfQ==\", \"account\": \"\(String(repeating: "a", count: 257))\"}"),
        BadBody(name: "account with a control character", body: "{\"receipt\": \"eyJhIjoxfQ==\", \"account\": \"a\\u0001b\"}"),
        BadBody(name: "account with DEL", body: "{\"receipt\": \"eyJhIjoxfQ==\", \"account\": \"a\\u007fb\"}"),
        BadBody(name: "account with a C1 control", body: "{\"receipt\": \"eyJhIjoxfQ==\", \"account\": \"a\\u0085b\"}"),
        BadBody(name: "101 transactions",
                body: "{\"transactions\": [" + Array(repeating: "\"a.b.c\"", count: 101).joined(separator: ",") + "]}"),
    ]

    /// An empty string in `transactions` is a string that is not a JWS: 422 with check `format`, like "a.b.c".
    @Test(arguments: ["", "a.b.c", ".."])
    func aTransactionThatIsNotAJWSFailsTheFormatCheck(_ jws: String) async throws {
        try await PurchaseFixture.run { fixture in
            let response = try await fixture.post("/v1/receipts", json: "{\"transactions\": [\"\(jws)\"]}")
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.errorCode == "receipt_invalid")
            #expect(response.object["check"] as? String == "format")
        }
    }

    @Test(arguments: badBodies)
    func badBodyIsABadRequest(_ example: BadBody) async throws {
        try await PurchaseFixture.run { fixture in
            let response = try await fixture.post("/v1/receipts", json: example.body)
            #expect(response.status == 400, "\(response.summary)")
            #expect(response.errorCode == "bad_request")
            #expect(response.errorMessage?.isEmpty == false)
            #expect(fixture.apple.callCounts == (production: 0, sandbox: 0))
        }
    }

    // RFC 9110 §15.5.16: 415 for a body in a format the route does not take.
    @Test(arguments: ["text/plain", "application/x-www-form-urlencoded", nil,
                      "application/json; charset=iso-8859-1", "application/json; charset=\"utf-16\"",
                      "application/json; charset=", "application/json; charset"] as [String?])
    func bodyThatIsNotJSONMediaIsUnsupported(contentType: String?) async throws {
        try await PurchaseFixture.run { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            let body = PurchaseFixture.jsonBytes(["receipt": receipt])
            let response = try await fixture.post("/v1/receipts", body: body, contentType: contentType)
            #expect(response.status == 415, "\(response.summary)")
            #expect(response.errorCode == "unsupported_media_type")
            #expect(fixture.apple.callCounts == (production: 0, sandbox: 0))
        }
    }

    @Test(arguments: ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=\"UTF-8\"",
                      "application/json; charset=utf-8; x=y"])
    func jsonMediaTypeVariantsAreAccepted(contentType: String) async throws {
        try await PurchaseFixture.run { fixture in
            let body = PurchaseFixture.jsonBytes(["receipt": fixture.apple.issueReceipt([PurchaseFixture.purchase()])])
            let response = try await fixture.post("/v1/receipts", body: body, contentType: contentType)
            #expect(response.status == 200, "\(response.summary)")
        }
    }

    /// Spec §4.2: at most 1 MiB. A body of exactly 1 MiB is read; one byte more is a `413` before the body
    /// is read, and the server goes on serving.
    @Test func bodyOverOneMebibyteIsTooLarge() async throws {
        try await PurchaseFixture.run { fixture in
            let limit = 1 << 20
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            var exact = Array("{\"receipt\": \"\(receipt)\"".utf8)
            exact += [UInt8](repeating: UInt8(ascii: " "), count: limit - exact.count - 1) + [UInt8(ascii: "}")]
            #expect(exact.count == limit)
            let accepted = try await fixture.post("/v1/receipts", body: exact)
            #expect(accepted.status == 200, "\(accepted.summary)")

            // RFC 9110 §15.5.14: declared one byte over, answered 413 without waiting for the rest of the body.
            let port = fixture.depot.port
            let head = "POST /v1/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(limit + 1)\r\n\r\n{\"receipt\": \""
            let refused = try await OffPool.run {
                let connection = try RawHTTPConnection(port: port)
                connection.send(head)
                return try connection.readResponse(timeout: 10)
            }
            #expect(refused.status == 413, "\(refused.summary)")
            #expect(refused.errorCode == "too_large")

            let after = try await fixture.postReceipt(fixture.apple.issueReceipt([PurchaseFixture.purchase()]))
            #expect(after.status == 200, "\(after.summary)")
        }
    }

    /// A receipt's surrounding whitespace is trimmed whatever it is (ASCII, or Unicode such as an em space);
    /// a receipt with plain ends is handed on as it came.
    @Test func receiptEndsAreTrimmed() throws {
        for (text, expected) in [("eyJhIjoxfQ==", "eyJhIjoxfQ=="), (" \t eyJhIjoxfQ==\r\n", "eyJhIjoxfQ=="),
                                 ("\u{2003}eyJhIjoxfQ==\u{00A0}", "eyJhIjoxfQ=="), ("\u{0B}\u{0C}eyJh\nIjoxfQ==\u{85}", "eyJh\nIjoxfQ=="),
                                 ("é", "é"), ("  ", "")] {
            #expect(PurchaseBody.trimmed(text) == expected, "\(Array(text.unicodeScalars))")
        }
        let body = try PurchaseBody.parse(Array("{\"receipt\": \"\\u2003 eyJhIjoxfQ==\\n\"}".utf8))
        guard case .receipt(let receipt) = body.proof else {
            Issue.record("not a receipt: \(body.proof)")
            return
        }
        #expect(receipt == "eyJhIjoxfQ==")
    }
}
