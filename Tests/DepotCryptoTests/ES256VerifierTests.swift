import DepotCrypto
import Testing

struct ES256VerifierTests {
    /// A P-384 SubjectPublicKeyInfo made with `openssl ecparam -name secp384r1 -genkey` for this test.
    static let p384SPKI = Hex.decode(
        "3076301006072a8648ce3d020106052b81040022036200042340dd272b060aa9c803d8381dc11133202fadb69b680d8ec9d33cc6481b875e"
            + "25925e915f9f0123eceeabc1466c93b070a3deb4af9c223c31e6f00869d781a73a195cfb5d8e266a0a14c5600a13223957979458c04760"
            + "308b298f03be18e86d")!
    /// A 1024-bit RSA SubjectPublicKeyInfo made with `openssl genrsa` for this test.
    static let rsaSPKI = Hex.decode(
        "30819f300d06092a864886f70d010101050003818d0030818902818100b5d10f339d3aeaf68f2ed37545f2fcff643d8366d0bb3ac970c50c"
            + "bd99c54669824eeb00249a77b4d1255b2ed2332b1f5ca84646fd567c30724710ceeca97cc8f51ec695c00e19f7e4935eab829673b14fa2"
            + "38e3f215b144c3e3cc8167ca24a50cf6c222a6a71b68d10cad3c0592caf8a33a754a982d837fe7744355f85418f50203010001")!

    let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzaWduZWREYXRlIjoxfQ".utf8)

    @Test func signedMessageVerifies() throws {
        let key = try ECPrivateKey.generateP256()
        let signature = try key.signES256(message)
        #expect(signature.count == 64)
        try ES256Verifier.verify(signature: signature, message: message, publicKey: key.publicKey)
    }

    @Test func anyFlippedBitIsAMismatch() throws {
        let key = try ECPrivateKey.generateP256()
        let signature = try key.signES256(message)
        for index in [0, 31, 32, 63] {
            var flipped = signature
            flipped[index] ^= 0x01
            #expect(throws: ES256Verifier.Failure.mismatch) {
                try ES256Verifier.verify(signature: flipped, message: message, publicKey: key.publicKey)
            }
        }
        var changed = message
        changed[changed.count - 1] ^= 0x01
        #expect(throws: ES256Verifier.Failure.mismatch) {
            try ES256Verifier.verify(signature: signature, message: changed, publicKey: key.publicKey)
        }
    }

    @Test func anotherKeyIsAMismatch() throws {
        let signature = try ECPrivateKey.generateP256().signES256(message)
        #expect(throws: ES256Verifier.Failure.mismatch) {
            try ES256Verifier.verify(signature: signature, message: message, publicKey: try ECPrivateKey.generateP256().publicKey)
        }
    }

    @Test(arguments: [0, 1, 63, 65, 72, 128])
    func wrongLengthIsRefused(_ length: Int) throws {
        let key = try ECPrivateKey.generateP256()
        #expect(throws: ES256Verifier.Failure.wrongLength(length)) {
            try ES256Verifier.verify(signature: [UInt8](repeating: 1, count: length), message: message, publicKey: key.publicKey)
        }
    }

    @Test func derSignatureIsNotAccepted() throws {
        // A DER ECDSA-Sig-Value that happens to be 64 bytes long is still read as R‖S and fails.
        let key = try ECPrivateKey.generateP256()
        #expect(throws: ES256Verifier.Failure.mismatch) {
            try ES256Verifier.verify(signature: [UInt8](repeating: 0, count: 64), message: message, publicKey: key.publicKey)
        }
    }

    @Test func keysOffP256AreRefused() throws {
        let p384 = try PublicKey(spkiDER: Self.p384SPKI)
        #expect(p384.curveName == "secp384r1")
        #expect(throws: ES256Verifier.Failure.wrongKey("secp384r1")) {
            try ES256Verifier.verify(signature: [UInt8](repeating: 1, count: 64), message: message, publicKey: p384)
        }
        let rsa = try PublicKey(spkiDER: Self.rsaSPKI)
        #expect(rsa.algorithmName == "RSA")
        #expect(throws: ES256Verifier.Failure.wrongKey("RSA")) {
            try ES256Verifier.verify(signature: [UInt8](repeating: 1, count: 64), message: message, publicKey: rsa)
        }
    }

    @Test func privateKeyRoundTripsThroughPKCS8() throws {
        let key = try ECPrivateKey.generateP256()
        let reloaded = try ECPrivateKey(der: key.pkcs8DER)
        #expect(reloaded.publicKey.spkiDER == key.publicKey.spkiDER)
        #expect(key.pemString.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        try ES256Verifier.verify(signature: try reloaded.signES256(message), message: message, publicKey: key.publicKey)
    }

    @Test func garbageKeysAreRefused() {
        #expect(throws: CryptoError.self) { try PublicKey(spkiDER: [0x30, 0x00]) }
        #expect(throws: CryptoError.self) { try ECPrivateKey(der: [0x30, 0x00]) }
    }
}
