import DepotCrypto
import Testing

/// RFC 4231 §4 test cases for HMAC-SHA-256.
struct HMACSHA256Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let testCase: Int
        let key: [UInt8]
        let data: [UInt8]
        let tag: String
        /// RFC 4231 §4.6 truncates the output of test case 5 to 128 bits.
        var truncatedTo: Int? = nil
        var testDescription: String { "RFC 4231 test case \(testCase)" }
    }

    static let vectors: [Vector] = [
        Vector(testCase: 1, key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
               tag: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(testCase: 2, key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
               tag: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(testCase: 3, key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
               tag: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(testCase: 4, key: Hex.decode("0102030405060708090a0b0c0d0e0f10111213141516171819")!,
               data: [UInt8](repeating: 0xcd, count: 50),
               tag: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(testCase: 5, key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8),
               tag: "a3b6167473100ee06e0c796c2955552b", truncatedTo: 16),
        Vector(testCase: 6, key: [UInt8](repeating: 0xaa, count: 131),
               data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
               tag: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(testCase: 7, key: [UInt8](repeating: 0xaa, count: 131),
               data: Array(("This is a test using a larger than block-size key and a larger than block-size data. "
                            + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
               tag: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: vectors)
    func rfc4231(_ vector: Vector) {
        let tag = HMACSHA256.authenticate(vector.data, key: vector.key)
        #expect(tag.count == HMACSHA256.tagLength)
        #expect(Array(tag.prefix(vector.truncatedTo ?? tag.count)).hexString == vector.tag)
    }

    @Test func isValidAcceptsTheTagAndRefusesAnyChange() {
        let key = Array("0123456789abcdef0123456789abcdef".utf8)
        let message = Array("pack=level2;exp=1764470038".utf8)
        let tag = HMACSHA256.authenticate(message, key: key)
        #expect(HMACSHA256.isValid(tag, for: message, key: key))
        var flipped = tag
        flipped[31] ^= 0x01
        #expect(!HMACSHA256.isValid(flipped, for: message, key: key))
        #expect(!HMACSHA256.isValid(Array(tag.prefix(16)), for: message, key: key))
        #expect(!HMACSHA256.isValid(tag, for: message + [0], key: key))
        #expect(!HMACSHA256.isValid(tag, for: message, key: key + [1]))
        // RFC 2104 §2 pads short keys with zeros, so a trailing zero byte names the same key.
        #expect(HMACSHA256.isValid(tag, for: message, key: key + [0]))
    }

    @Test func emptyKeyAndMessageAreAllowed() {
        // HMAC-SHA256("", "") from any reference implementation.
        #expect(HMACSHA256.authenticate([UInt8](), key: []).hexString
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
