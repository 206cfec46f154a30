import DepotCore
import Testing

/// RFC 4648 §10 test vectors, in the URL-safe alphabet without padding (§5).
struct Base64URLTests {
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test(arguments: vectors)
    func rfc4648(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        #expect(Base64URL.decode(bytes: Array(encoded.utf8)) == Array(plain.utf8))
    }

    @Test func usesTheURLSafeAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
    }

    @Test func roundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test(arguments: [
        "Zg==",      // padding
        "Zm9v\n",    // whitespace
        "Z",         // impossible length
        "Zm9v+/",    // standard alphabet
        "Zh",        // non-zero unused bits (RFC 4648 §3.5)
        "Zm9",       // non-zero unused bits
        "Zm.v",
        "Zé",
    ])
    func refusesNonCanonicalInput(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
