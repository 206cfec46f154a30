import Foundation
import Testing
import DepotCore

/// spec §4.3: the token payload names the pack, the original transaction, the account and the expiry.
@Suite struct DownloadTokenClaimsTests {
    static let claims: [DownloadTokenClaims] = [
        DownloadTokenClaims(pack: "level2", originalTransactionID: "2000000123456789", account: nil, expires: 1_780_000_000),
        DownloadTokenClaims(pack: "level3", originalTransactionID: "grant:operator", account: "player-1", expires: 0),
        DownloadTokenClaims(pack: "a.b_c-d", originalTransactionID: "t\"q\\u", account: "ñ \u{1}\n", expires: Int64.max),
        DownloadTokenClaims(pack: "p", originalTransactionID: "", account: "", expires: -5),
    ]

    @Test(arguments: claims)
    func payloadRoundTrip(_ claims: DownloadTokenClaims) throws {
        let parsed = try #require(DownloadTokenClaims.parse(payload: claims.payload()))
        #expect(parsed == claims)
    }

    @Test func payloadIsCompactJSONInAFixedOrder() {
        let claims = DownloadTokenClaims(pack: "level2", originalTransactionID: "42", account: nil, expires: 1_780_000_000)
        #expect(String(decoding: claims.payload(), as: UTF8.self) == #"{"p":"level2","t":"42","a":null,"e":1780000000}"#)
        let bound = DownloadTokenClaims(pack: "level2", originalTransactionID: "42", account: "acc", expires: 7)
        #expect(String(decoding: bound.payload(), as: UTF8.self) == #"{"p":"level2","t":"42","a":"acc","e":7}"#)
    }

    static let malformed: [String] = [
        "",
        "{",
        "[]",
        "null",
        #"{"t":"1","a":null,"e":1}"#,              // no pack
        #"{"p":"x","a":null,"e":1}"#,              // no transaction
        #"{"p":"x","t":"1","a":null}"#,            // no expiry
        #"{"p":1,"t":"1","a":null,"e":1}"#,        // pack not a string
        #"{"p":"x","t":1,"a":null,"e":1}"#,        // transaction not a string
        #"{"p":"x","t":"1","a":5,"e":1}"#,         // account not a string
        #"{"p":"x","t":"1","a":null,"e":"1"}"#,    // expiry not a number
    ]

    @Test(arguments: malformed)
    func malformedPayloadIsRefused(_ text: String) {
        #expect(DownloadTokenClaims.parse(payload: Array(text.utf8)) == nil)
    }
}
