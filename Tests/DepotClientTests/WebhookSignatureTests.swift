import DepotClient
import Foundation
import Testing

@Suite struct WebhookSignatureTests {
    static let secret = "whsec-0123456789abcdef0123456789abcdef"
    static let body = Data(#"{"id":"evt_1","type":"purchase.granted","created":"2026-12-01T12:00:00Z","data":{}}"#.utf8)
    static let now = Date(timeIntervalSince1970: 1_796_126_400)

    @Test func matchesAnIndependentHMAC() throws {
        // printf '1.body' | openssl dgst -sha256 -hmac key
        let header = try WebhookSignature.header(body: Data("body".utf8), secret: "key", timestamp: 1)
        #expect(header == "t=1,v1=91b5374b153842ad05b2c4eab9349b8321b14703165bd3fb8b034dfb8be98ae5")
    }

    @Test func acceptsItsOwnSignatureAndRefusesTamperingStalenessAndWrongSecrets() throws {
        let timestamp = Int(Self.now.timeIntervalSince1970)
        let header = try WebhookSignature.header(body: Self.body, secret: Self.secret, timestamp: timestamp)
        #expect(WebhookSignature.verify(body: Self.body, header: header, secret: Self.secret, now: Self.now))
        #expect(WebhookSignature.verify(body: Self.body, header: header, secret: Self.secret, now: Self.now.addingTimeInterval(299)))

        var tampered = Self.body
        tampered[tampered.startIndex + 10] ^= 1
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.check(body: tampered, header: header, secret: Self.secret, now: Self.now)
        }
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.check(body: Self.body, header: header, secret: Self.secret + "x", now: Self.now)
        }
        #expect(throws: WebhookSignature.Failure.outsideTolerance) {
            try WebhookSignature.check(body: Self.body, header: header, secret: Self.secret, now: Self.now.addingTimeInterval(301))
        }
        // The timestamp is signed: moving it breaks the signature.
        let moved = header.replacingOccurrences(of: "t=\(timestamp)", with: "t=\(timestamp + 1)")
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.check(body: Self.body, header: moved, secret: Self.secret, now: Self.now)
        }
        for malformed in ["", "v1=abc", "t=abc,v1=00", "t=1", "t=1,t=2,v1=00"] {
            #expect(throws: WebhookSignature.Failure.malformed) {
                try WebhookSignature.check(body: Self.body, header: malformed, secret: Self.secret, now: Self.now)
            }
        }
    }

    @Test func oneMatchingValueAmongSeveralPasses() throws {
        let timestamp = Int(Self.now.timeIntervalSince1970)
        let good = try WebhookSignature.header(body: Self.body, secret: Self.secret, timestamp: timestamp)
        let value = good.split(separator: ",")[1]
        let rotated = "t=\(timestamp),v1=\(String(repeating: "0", count: 64)),\(value)"
        #expect(WebhookSignature.verify(body: Self.body, header: rotated, secret: Self.secret, now: Self.now))
    }
}
