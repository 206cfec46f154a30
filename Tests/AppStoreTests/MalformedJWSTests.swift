import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation
import Testing

/// Damaged input ends at the right check and never crashes.
struct MalformedJWSTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let jws: String
        let expected: VerificationCheck
        var testDescription: String { name }
    }

    static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
    static let payload = b64(#"{"bundleId":"com.example","environment":"Sandbox","signedDate":1761962975000}"#)
    static let signature = Base64URL.encode([UInt8](repeating: 1, count: 64))
    static func header(_ json: String) -> String { b64(json) }

    static let cases: [Case] = [
        Case(name: "empty", jws: "", expected: .format),
        Case(name: "two dots only", jws: "..", expected: .format),
        Case(name: "a.b.c (Apple's test)", jws: "a.b.c", expected: .format),
        Case(name: "a.b.c.d (Apple's test)", jws: "a.b.c.d", expected: .format),
        Case(name: "two segments", jws: "\(header(#"{"alg":"ES256"}"#)).\(payload)", expected: .format),
        Case(name: "padded payload", jws: "\(header(#"{"alg":"ES256"}"#)).\(payload)==.\(signature)", expected: .format),
        Case(name: "header not JSON", jws: "\(b64("alg=ES256")).\(payload).\(signature)", expected: .format),
        Case(name: "header is a JSON array", jws: "\(b64("[1]")).\(payload).\(signature)", expected: .format),
        Case(name: "x5c is a string", jws: "\(header(#"{"alg":"ES256","x5c":"MIIB"}"#)).\(payload).\(signature)", expected: .format),
        Case(name: "x5c holds numbers", jws: "\(header(#"{"alg":"ES256","x5c":[1,2,3]}"#)).\(payload).\(signature)", expected: .format),
        Case(name: "no alg", jws: "\(header(#"{"x5c":["a","b","c"]}"#)).\(payload).\(signature)", expected: .algorithm),
        Case(name: "alg none", jws: "\(header(#"{"alg":"none","x5c":["a","b","c"]}"#)).\(payload).\(signature)", expected: .algorithm),
        Case(name: "empty x5c", jws: "\(header(#"{"alg":"ES256","x5c":[]}"#)).\(payload).\(signature)", expected: .chain_length),
        Case(name: "four certificates", jws: "\(header(#"{"alg":"ES256","x5c":["a","b","c","d"]}"#)).\(payload).\(signature)", expected: .chain_length),
        Case(name: "payload not JSON", jws: "\(header(#"{"alg":"ES256","x5c":["a","b","c"]}"#)).\(b64("hello")).\(signature)", expected: .format),
        Case(name: "payload a JSON array", jws: "\(header(#"{"alg":"ES256","x5c":["a","b","c"]}"#)).\(b64("[]")).\(signature)", expected: .format),
        Case(name: "signedDate a string", jws: "\(header(#"{"alg":"ES256","x5c":["a","b","c"]}"#)).\(b64(#"{"signedDate":"today"}"#)).\(signature)", expected: .format),
        Case(name: "x5c not base64", jws: "\(header(#"{"alg":"ES256","x5c":["%%%%","b","c"]}"#)).\(payload).\(signature)", expected: .certificate),
        Case(name: "x5c base64 but not DER", jws: "\(header(#"{"alg":"ES256","x5c":["AAAA","AAAA","AAAA"]}"#)).\(payload).\(signature)", expected: .certificate),
        Case(name: "non-ASCII text", jws: "é.ü.ß", expected: .format),
    ]

    @Test(arguments: cases)
    func endsAtTheExpectedCheck(_ testCase: Case) throws {
        let verifier = SignedDataVerifier(trustedRoots: [try Fixtures.testCA()], bundleID: "com.example", allowSandbox: true)
        let result = verifier.verifySignedData(testCase.jws, kind: .transaction, now: Fixtures.collectionDay)
        #expect(result.failureCheck == testCase.expected, "\(result)")
        #expect(verifier.verifyNotification(testCase.jws, now: Fixtures.collectionDay).failureCheck == testCase.expected)
    }

    @Test func leafThatIsNotDERButValidBase64IsACertificateFailureNamingTheEntry() throws {
        let chain = [try Fixtures.certificate("apple-library/test-chain/testLeaf.der"),
                     try Fixtures.certificate("apple-library/test-chain/testIntermediate.der"), try Fixtures.testCA()]
        var x5c = JWSParts.x5c(chain)
        x5c[1] = Data(chain[1].derBytes.dropLast(3)).base64EncodedString()  // truncated DER
        let parts = try JWSParts(header: ["alg": "ES256", "x5c": x5c],
                                 payload: ["bundleId": "com.example", "environment": "Sandbox"])
        let verifier = SignedDataVerifier(trustedRoots: [try Fixtures.testCA()], bundleID: "com.example", allowSandbox: true)
        let result = verifier.verifyTransaction(parts.compact, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .certificate)
        #expect(result.failureDetail?.hasPrefix("x5c[1]") == true)
    }

    @Test func randomBytesNeverCrash() throws {
        let verifier = SignedDataVerifier(trustedRoots: [try Fixtures.testCA()], bundleID: "com.example", allowSandbox: true)
        let real = try Fixtures.text("apple-library/mock_signed_data/testNotification")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var bytes = Array(real.utf8)
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if case .success = verifier.verifyNotification(text, now: Fixtures.collectionDay) {
                // A change in a base64 character's unused bits or in an unchecked field can survive;
                // anything accepted must still be byte-identical in its signed part.
                #expect(text.split(separator: ".").prefix(2) == real.split(separator: ".").prefix(2))
            }
        }
    }
}
