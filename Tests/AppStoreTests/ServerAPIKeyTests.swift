import AppStore
import DepotCore
import DepotCrypto
import DepotTestSupport
import Foundation
import Testing

/// Loading the In-App Purchase key (spec §1): the errors a misconfigured start-up reports.
struct ServerAPIKeyTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"

    static func failure(_ path: String, keyID: String = "2X9R4HXF34", issuerID: String = issuer) -> ServerAPIKeyError? {
        do {
            _ = try ServerAPIKey.load(path: path, keyID: keyID, issuerID: issuerID)
            return nil
        } catch {
            return error
        }
    }

    @Test func p8KeyLoads() throws {
        let directory = TemporaryDirectory()
        let key = try ECPrivateKey.generateP256()
        directory.write("SubscriptionKey_2X9R4HXF34.p8", key.pemString)
        let loaded = try ServerAPIKey.load(path: directory.path + "/SubscriptionKey_2X9R4HXF34.p8", keyID: "2X9R4HXF34", issuerID: Self.issuer)
        #expect(loaded.keyID == "2X9R4HXF34" && loaded.issuerID == Self.issuer)
        let token = try ServerAPITokenIssuer(key: loaded, bundleID: "com.example.depot").sign(issuedAt: 0)
        let parts = token.split(separator: ".")
        try ES256Verifier.verify(signature: try #require(Base64URL.decode(parts[2])), message: Array("\(parts[0]).\(parts[1])".utf8),
                                 publicKey: key.publicKey)
    }

    @Test func keyErrorsNameTheProblemNotTheKey() throws {
        let directory = TemporaryDirectory()
        directory.write("p384.p8", PrivateKeyLoadingFixtures.p384PKCS8)
        directory.write("sec1.p8", PrivateKeyLoadingFixtures.p256SEC1)
        directory.write("garbage.p8", "not a key")
        directory.write("folder/.keep", "")
        let cases: [(String, ServerAPIKeyError?)] = [
            ("p384.p8", .invalidKey(path: directory.path + "/p384.p8", .notP256(found: "secp384r1"))),
            ("sec1.p8", .invalidKey(path: directory.path + "/sec1.p8", .notPKCS8(label: "EC PRIVATE KEY"))),
            ("garbage.p8", .invalidKey(path: directory.path + "/garbage.p8", .notPEM)),
            ("folder", .unreadableFile(path: directory.path + "/folder", reason: "not a regular file")),
        ]
        for (file, expected) in cases {
            let failure = Self.failure(directory.path + "/" + file)
            #expect(failure == expected)
            for line in PrivateKeyLoadingFixtures.p384PKCS8.split(separator: "\n") + PrivateKeyLoadingFixtures.p256SEC1.split(separator: "\n")
            where !line.hasPrefix("-----") {
                #expect(failure?.description.contains(line.prefix(16)) == false)
            }
        }
        guard case .unreadableFile(_, let reason)? = Self.failure(directory.path + "/missing.p8") else {
            Issue.record("a missing file is unreadable")
            return
        }
        #expect(!reason.isEmpty)
        #expect(Self.failure(directory.path + "/missing.p8")?.description.contains("missing.p8") == true)
    }

    /// A corrupted key file's start-up line is one sentence: "the key file X is a PKCS#8 key that does not decode (…)".
    @Test func aCorruptedKeyFileReadsAsASentence() throws {
        let directory = TemporaryDirectory()
        directory.write("damaged.p8", "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n")
        let failure = try #require(Self.failure(directory.path + "/damaged.p8"))
        guard case .invalidKey(_, .unreadable(let reason)) = failure else {
            Issue.record("expected an unreadable key, got \(failure)")
            return
        }
        #expect(failure.description == "the key file \(directory.path)/damaged.p8 is a PKCS#8 key that does not decode (\(reason))")
    }

    @Test func identifiersAreChecked() throws {
        let directory = TemporaryDirectory()
        directory.write("key.p8", try ECPrivateKey.generateP256().pemString)
        #expect(Self.failure(directory.path + "/key.p8", issuerID: "not-a-uuid") == .invalidIssuerID)
        #expect(Self.failure(directory.path + "/key.p8", keyID: "") == .invalidKeyID)
        #expect(Self.failure(directory.path + "/key.p8", keyID: "with space") == .invalidKeyID)
    }
}

/// Throw-away keys made with `openssl genpkey` / `openssl ecparam` for these tests.
enum PrivateKeyLoadingFixtures {
    static let p384PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBPHSwnLwa22JNd4UKo
        SZ4geb4ehMPvOPtpU0rECe87xX8SaYFkvVjITd28R/IpJdOhZANiAAR0QTFoJNnY
        aNKoz+hEqKf3aaBueANFikCjWy2kWab+nggXbuz03WStTQY3DqgGDh1hJ2E14WRF
        sqXV0Qjadt3NueZO2dh6Q1VIrFpCdQtNeMOgyCh+znoxL/KF6UzSFhY=
        -----END PRIVATE KEY-----
        """
    static let p256SEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEICy15nFA73e0L3RJMj6WRm/an/Dlx9/MjNXM0RWgjwyloAoGCCqGSM49
        AwEHoUQDQgAEV1Dx034Kx9iZzmi2kXWnCUx4bVFLvO5R9FMToryPjDlF6UUqUxNT
        i0PkVzK6naoho+VyHIu3wbO/9r0FoLZd4A==
        -----END EC PRIVATE KEY-----
        """
}
