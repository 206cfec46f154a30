import DepotCrypto
import Testing

/// FIPS 180-4 / NIST CSRC example vectors for SHA-256.
struct SHA256Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let message: String
        let digest: String
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        Vector(name: "empty", message: "",
               digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        Vector(name: "abc", message: "abc",
               digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        Vector(name: "448-bit message", message: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
               digest: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        Vector(name: "896-bit message",
               message: "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
               digest: "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ]

    @Test(arguments: vectors)
    func knownAnswer(_ vector: Vector) {
        #expect(SHA256.hash(Array(vector.message.utf8)).hexString == vector.digest)
    }

    @Test(arguments: vectors)
    func byteAtATimeStreamingMatchesOneShot(_ vector: Vector) {
        let hasher = SHA256()
        for byte in vector.message.utf8 { hasher.update([byte]) }
        #expect(hasher.finalize().hexString == vector.digest)
    }

    @Test func millionAStreamedInBlocks() {
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        let hasher = SHA256()
        for _ in 0..<1000 {
            block.withUnsafeBytes { hasher.update($0) }
        }
        #expect(hasher.finalize().hexString == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func finalizeResetsForReuse() {
        let hasher = SHA256()
        hasher.update(Array("abc".utf8))
        _ = hasher.finalize()
        hasher.update(Array("abc".utf8))
        #expect(hasher.finalize().hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hasher.finalize().hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func resetDiscardsInput() {
        let hasher = SHA256()
        hasher.update(Array("garbage".utf8))
        hasher.reset()
        hasher.update(Array("abc".utf8))
        #expect(hasher.finalize().hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func everySequenceKindHashesTheSame() {
        let bytes = Array("abc".utf8)
        let expected = SHA256.hash(bytes)
        #expect(SHA256.hash(bytes[...]) == expected)
        #expect(SHA256.hash("abc".utf8) == expected)
        #expect(SHA256.hash(bytes.lazy.map { $0 }) == expected)  // not contiguous: copied once
        #expect(bytes.withUnsafeBytes { SHA256.hash($0) } == expected)
        #expect(expected.count == SHA256.digestLength)
    }
}
