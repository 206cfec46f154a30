import DepotCrypto
import Foundation
import Testing

/// `ECPrivateKey(pkcs8PEM:)`: App Store Connect's `.p8` form is accepted, everything else refused
/// with a reason that never quotes the key.
struct PrivateKeyLoadingTests {
    // Throw-away keys made with `openssl genpkey` / `openssl ecparam` for these tests.
    static let p384PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBPHSwnLwa22JNd4UKo
        SZ4geb4ehMPvOPtpU0rECe87xX8SaYFkvVjITd28R/IpJdOhZANiAAR0QTFoJNnY
        aNKoz+hEqKf3aaBueANFikCjWy2kWab+nggXbuz03WStTQY3DqgGDh1hJ2E14WRF
        sqXV0Qjadt3NueZO2dh6Q1VIrFpCdQtNeMOgyCh+znoxL/KF6UzSFhY=
        -----END PRIVATE KEY-----
        """
    static let rsaPKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEAyw/bShtwGcpDkWIr
        MaG+rhqQLC0YruKwd5LSDadNKrViCmau+hJ406gEndU0KMqQVwWu2HtoZx7eAyTn
        94XnOQIDAQABAkEArHPY/sTynVSDsbK3kD0XXXE9w+bAsbXfvI06S1IsXPmMmm6H
        BbN7+n0IhsfL8YpEcRdWoevSC8P/S1gLyQQdCQIhAP6ctyeMZlLKeM8/epyvyD5m
        df00rN2WB7iQW2egr2QPAiEAzCs1Tc35j1i5TLwnq/PqmuQY/aVN3cQxc14Eywoq
        GDcCIH5JSOcK0m3aE1XoTG6PGakptPgkOmGl2qqGn2+k2ZmtAiEAlTe3G4hArs2v
        kC+r5va8LjwrL6ZTBJPReHnskuB4530CIQDqrJ0JQD3puYw4Dxl3hNbazhwO8Nbd
        zViFG57JxGhnHg==
        -----END PRIVATE KEY-----
        """
    static let ed25519PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIJdSjeXYNRj/doZXmqSP8UW6Cervr4vqo5lAQ15MYQEf
        -----END PRIVATE KEY-----
        """
    /// P-256, but SEC 1 (`openssl ecparam -genkey`), not PKCS#8.
    static let p256SEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEICy15nFA73e0L3RJMj6WRm/an/Dlx9/MjNXM0RWgjwyloAoGCCqGSM49
        AwEHoUQDQgAEV1Dx034Kx9iZzmi2kXWnCUx4bVFLvO5R9FMToryPjDlF6UUqUxNT
        i0PkVzK6naoho+VyHIu3wbO/9r0FoLZd4A==
        -----END EC PRIVATE KEY-----
        """
    static let p256Encrypted = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAiNJ+JX7mC5XQICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEDP/3Fz2G0hjgAYxuGs2dlwEgZAC
        kNtne/YkWyNv0ymWKHF6RxY/8eK2BkzAohlUDJ/GM7BPevdTM0YOa+5Vu7/1/NVs
        x2YfJQz7esI36qbGXb00J333FkyvskR+f3ob3F/CTz4qBWBaIRXxlASfT/X1kUFt
        cc/wc66MRAuAe0XHGSiL6l8HUp0gSCVo3sjvCWuYDKd7e/6bWJHmXDyB/4J4vzk=
        -----END ENCRYPTED PRIVATE KEY-----
        """

    static func load(_ text: String) -> Result<ECPrivateKey, PrivateKeyError> {
        Result { () throws(PrivateKeyError) in try ECPrivateKey(pkcs8PEM: Array(text.utf8)) }
    }

    static func failure(_ text: String) -> PrivateKeyError? {
        if case .failure(let error) = load(text) { return error }
        return nil
    }

    @Test func p256PKCS8LoadsAndSigns() throws {
        let original = try ECPrivateKey.generateP256()
        #expect(original.pemString.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let loaded = try Self.load(original.pemString).get()
        #expect(loaded.publicKey.spkiDER == original.publicKey.spkiDER)
        let message = Array("header.payload".utf8)
        try ES256Verifier.verify(signature: try loaded.signES256(message), message: message, publicKey: original.publicKey)
    }

    @Test func leadingTextBeforeTheBlockIsAllowed() throws {
        let key = try ECPrivateKey.generateP256()
        #expect(throws: Never.self) { try Self.load("SubscriptionKey_ABC123DEFG.p8\n" + key.pemString).get() }
    }

    @Test(arguments: [(p384PKCS8, "secp384r1"), (rsaPKCS8, "RSA"), (ed25519PKCS8, "ED25519")])
    func otherKeyTypesAreNotP256(pem: String, found: String) {
        #expect(Self.failure(pem) == .notP256(found: found))
        #expect(Self.failure(pem)?.description.contains("not EC P-256") == true)
    }

    @Test func sec1IsNotPKCS8() {
        #expect(Self.failure(Self.p256SEC1) == .notPKCS8(label: "EC PRIVATE KEY"))
    }

    @Test func encryptedKeyIsRefused() {
        #expect(Self.failure(Self.p256Encrypted) == .encrypted)
    }

    @Test func certificateIsNotAKey() throws {
        let key = try ECPrivateKey.generateP256()
        let certificate = try CertificateBuilder(subject: [("CN", "Not a key")], notBefore: .init(timeIntervalSince1970: 0),
                                                 notAfter: .init(timeIntervalSince1970: 4_000_000_000))
            .issue(for: key.publicKey, issuer: nil, signer: key)
        #expect(Self.failure(certificate.pemString) == .notPKCS8(label: "CERTIFICATE"))
    }

    @Test(arguments: ["", "not a key at all", "\u{0}\u{1}\u{2}"])
    func nonPEMIsRefused(text: String) {
        #expect(Self.failure(text) == .notPEM)
    }

    @Test func damagedBlocksAreUnreadableWithoutQuotingTheKey() throws {
        let pem = try ECPrivateKey.generateP256().pemString
        let lines = pem.split(separator: "\n").map(String.init)
        let body = lines[1..<(lines.count - 1)]
        // Bad base64 inside the block; a truncated block (no END line); valid base64 of a damaged PrivateKeyInfo.
        let badBase64 = ([lines[0], "!!!!" + body.first!.dropFirst(4)] + body.dropFirst() + [lines.last!]).joined(separator: "\n")
        let truncated = ([lines[0]] + body).joined(separator: "\n")
        let damaged = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
        for text in [badBase64, truncated, damaged] {
            guard case .unreadable(let reason)? = Self.failure(text) else {
                Issue.record("expected unreadable, got \(String(describing: Self.failure(text)))")
                continue
            }
            for line in body { #expect(!reason.contains(line) && !reason.contains(line.prefix(12))) }
        }
    }
}
