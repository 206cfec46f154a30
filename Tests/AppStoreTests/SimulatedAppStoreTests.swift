import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation
import Testing

/// Round trips through the simulated App Store's test PKI and signer.
struct SimulatedAppStoreTests {
    static let bundle = "com.example.depot"
    /// 2026-11-29T10:00:00Z.
    static let purchase = Date(timeIntervalSince1970: 1_795_946_400)
    static let year: TimeInterval = 365 * 86_400

    static func pki(leafCarriesAppleOID: Bool = true, intermediateCarriesAppleOID: Bool = true,
                    leafValidUntil: Date? = nil) throws -> TestPKI {
        try TestPKI.generate(validFrom: purchase.addingTimeInterval(-year), validUntil: purchase.addingTimeInterval(year),
                             leafValidUntil: leafValidUntil, leafCarriesAppleOID: leafCarriesAppleOID,
                             intermediateCarriesAppleOID: intermediateCarriesAppleOID)
    }

    static func verifier(_ pki: TestPKI, allowSandbox: Bool = true) throws -> SignedDataVerifier {
        SignedDataVerifier(trustedRoots: try X509Certificate.parsePEMOrDER(Array(pki.rootPEM.utf8)),
                           bundleID: bundle, allowSandbox: allowSandbox)
    }

    static func transaction(environment: String = "Sandbox", bundleId: String = bundle) -> TransactionSigner.Transaction {
        TransactionSigner.Transaction(transactionId: "1000000000000001", bundleId: bundleId,
                                      productId: "com.example.depot.level2", purchaseDate: purchase,
                                      environment: environment, appAccountToken: "0c8e4f2a-6f6c-4a3e-9a55-5d1b1f0a8f10")
    }

    @Test func signedTransactionRoundTrips() throws {
        let pki = try Self.pki()
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction())
        let transaction = try Self.verifier(pki).verifyTransaction(jws, now: Self.purchase).get()
        #expect(transaction.transactionId == "1000000000000001")
        #expect(transaction.originalTransactionId == "1000000000000001")
        #expect(transaction.productId == "com.example.depot.level2")
        #expect(transaction.purchaseDate == Self.purchase)
        #expect(transaction.type == .nonConsumable)
        #expect(transaction.environment == .sandbox)
        #expect(transaction.appAccountToken == "0c8e4f2a-6f6c-4a3e-9a55-5d1b1f0a8f10")
        let header = JWSParts(jws).headerObject
        #expect(header["alg"] as? String == "ES256")
        #expect(JWSParts(jws).x5c == pki.x5c)
    }

    @Test func productionTransactionPassesWithSandboxOff() throws {
        let pki = try Self.pki()
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction(environment: "Production"))
        #expect(try Self.verifier(pki, allowSandbox: false).verifyTransaction(jws, now: Self.purchase).get().environment
            == .production)
    }

    @Test(arguments: [("Sandbox", false), ("Xcode", true), ("LocalTesting", true), ("Staging", true)])
    func refusedEnvironments(environment: String, allowSandbox: Bool) throws {
        let pki = try Self.pki()
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction(environment: environment))
        let result = try Self.verifier(pki, allowSandbox: allowSandbox).verifyTransaction(jws, now: Self.purchase)
        #expect(result.failureCheck == .environment)
    }

    @Test func expiredLeafFailsTheChain() throws {
        let pki = try Self.pki(leafValidUntil: Self.purchase.addingTimeInterval(-86_400))
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction())
        let result = try Self.verifier(pki).verifyTransaction(jws, now: Self.purchase)
        #expect(result.failureCheck == .chain)
        #expect(result.failureDetail?.contains("certificate has expired") == true)
    }

    @Test func leafWithoutAppleOIDFails() throws {
        let pki = try Self.pki(leafCarriesAppleOID: false)
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction())
        let result = try Self.verifier(pki).verifyTransaction(jws, now: Self.purchase)
        #expect(result.failureCheck == .oid)
        #expect(result.failureDetail?.contains("leaf") == true)
    }

    @Test func intermediateWithoutAppleOIDFails() throws {
        let pki = try Self.pki(intermediateCarriesAppleOID: false)
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction())
        let result = try Self.verifier(pki).verifyTransaction(jws, now: Self.purchase)
        #expect(result.failureCheck == .oid)
        #expect(result.failureDetail?.contains("intermediate") == true)
    }

    @Test func anotherPKIIsNotTrusted() throws {
        let jws = try TransactionSigner(pki: try Self.pki()).signedTransaction(Self.transaction())
        #expect(try Self.verifier(try Self.pki()).verifyTransaction(jws, now: Self.purchase).failureCheck == .chain)
    }

    @Test func trustedRootSmuggledInAsX5C2DoesNotHelp() throws {
        // x5c[2] is the attacker's own root; the configured root is another one.
        let attacker = try Self.pki()
        let jws = try TransactionSigner(pki: attacker).signedTransaction(Self.transaction())
        let configured = try Self.pki()
        let verifier = SignedDataVerifier(trustedRoots: [configured.root], bundleID: Self.bundle, allowSandbox: true)
        #expect(verifier.verifyTransaction(jws, now: Self.purchase).failureCheck == .chain)
    }

    @Test func leafSignedDirectlyByTheRootIsNotAnAppleChain() throws {
        // x5c = [leaf issued by the root itself, some intermediate, root]: the path skips x5c[1].
        let pki = try Self.pki()
        let rootKey = try ECPrivateKey.generateP256()
        let root = try CertificateBuilder(subject: [("CN", "Root")], notBefore: pki.root.notBefore, notAfter: pki.root.notAfter,
                                          basicConstraints: .certificateAuthority(pathLength: nil), keyUsage: [.keyCertSign])
            .issue(for: rootKey.publicKey, issuer: nil, signer: rootKey)
        let leaf = try CertificateBuilder(subject: [("CN", "Leaf")], notBefore: pki.leaf.notBefore, notAfter: pki.leaf.notAfter,
                                          keyUsage: [.digitalSignature], markerExtensionOIDs: [TestPKI.leafMarkerOID])
            .issue(for: pki.leafKey.publicKey, issuer: root, signer: rootKey)
        let signer = TransactionSigner(pki: pki)
        let payload = try JSONSerialization.data(withJSONObject: Self.transaction().jsonObject)
        let jws = try signer.sign(payloadJSON: Array(payload), x5c: JWSParts.x5c([leaf, pki.intermediate, root]))
        let verifier = SignedDataVerifier(trustedRoots: [root], bundleID: Self.bundle, allowSandbox: true)
        let result = verifier.verifyTransaction(jws, now: Self.purchase)
        #expect(result.failureCheck == .chain)
        #expect(result.failureDetail?.contains("x5c[1]") == true)
    }

    @Test func missingSignedDateValidatesAtNow() throws {
        let pki = try Self.pki(leafValidUntil: Self.purchase.addingTimeInterval(86_400))
        var payload = Self.transaction().jsonObject
        payload["signedDate"] = nil
        let jws = try TransactionSigner(pki: pki).sign(payload: payload)
        let verifier = try Self.verifier(pki)
        // Valid at `now`, then the model needs signedDate: format.
        #expect(verifier.verifyTransaction(jws, now: Self.purchase).failureCheck == .format)
        #expect(verifier.verifyTransaction(jws, now: Self.purchase.addingTimeInterval(2 * 86_400)).failureCheck == .chain)
    }

    @Test func missingBundleOrEnvironmentIsRefused() throws {
        let pki = try Self.pki()
        let signer = TransactionSigner(pki: pki)
        var noBundle = Self.transaction().jsonObject
        noBundle["bundleId"] = nil
        #expect(try Self.verifier(pki).verifyTransaction(try signer.sign(payload: noBundle), now: Self.purchase).failureCheck
            == .bundle)
        var noEnvironment = Self.transaction().jsonObject
        noEnvironment["environment"] = nil
        #expect(try Self.verifier(pki).verifyTransaction(try signer.sign(payload: noEnvironment), now: Self.purchase)
            .failureCheck == .environment)
    }

    /// A transaction is decoded once (its facts come from it): the result is what the general path decodes,
    /// and its checks still run on it (here the chain at its signedDate, after the leaf expired: refused).
    @Test func oneDecodingGivesWhatTheGeneralPathGives() throws {
        let pki = try Self.pki(leafValidUntil: Self.purchase.addingTimeInterval(86_400))
        let signer = TransactionSigner(pki: pki)
        let verifier = try Self.verifier(pki)
        var transaction = Self.transaction()
        transaction.expiresDate = Self.purchase.addingTimeInterval(3600)
        transaction.revocationDate = Self.purchase.addingTimeInterval(60)
        transaction.revocationReason = 1
        let jws = try signer.signedTransaction(transaction)
        let general = try JSONDecoder().decode(StoreKitTransaction.self,
                                               from: try verifier.verifySignedData(jws, kind: .transaction, now: Self.purchase).get().payload)
        #expect(try verifier.verifyTransaction(jws, now: Self.purchase).get() == general)
        transaction.signedDate = Self.purchase.addingTimeInterval(2 * 86_400)
        #expect(verifier.verifyTransaction(try signer.signedTransaction(transaction), now: Self.purchase).failureCheck == .chain)
    }

    @Test func signedButIncompleteTransactionIsAFormatError() throws {
        let pki = try Self.pki()
        var payload = Self.transaction().jsonObject
        payload["productId"] = nil
        let result = try Self.verifier(pki).verifyTransaction(try TransactionSigner(pki: pki).sign(payload: payload), now: Self.purchase)
        #expect(result.failureCheck == .format)
        #expect(result.failureDetail?.contains("productId") == true)
    }

    @Test func chainCacheServesRepeatsAndStillHonoursExpiry() throws {
        let pki = try Self.pki(leafValidUntil: Self.purchase.addingTimeInterval(86_400))
        let signer = TransactionSigner(pki: pki)
        let verifier = try Self.verifier(pki)
        var transaction = Self.transaction()
        for _ in 0..<3 {  // first: full validation, then cache hits
            #expect(throws: Never.self) { try verifier.verifyTransaction(try signer.signedTransaction(transaction), now: Self.purchase).get() }
        }
        transaction.signedDate = Self.purchase.addingTimeInterval(2 * 86_400)  // after the leaf's notAfter
        #expect(verifier.verifyTransaction(try signer.signedTransaction(transaction), now: Self.purchase).failureCheck == .chain)
        transaction.signedDate = Self.purchase
        #expect(throws: Never.self) { try verifier.verifyTransaction(try signer.signedTransaction(transaction), now: Self.purchase).get() }
    }

    @Test func cachedHeaderStillGetsSignatureBundleAndEnvironmentChecks() throws {
        let pki = try Self.pki()
        let signer = TransactionSigner(pki: pki)
        let verifier = try Self.verifier(pki, allowSandbox: false)
        let good = try signer.signedTransaction(Self.transaction(environment: "Production"))
        #expect(throws: Never.self) { try verifier.verifyTransaction(good, now: Self.purchase).get() }  // header now cached

        var tampered = JWSParts(good)
        let index = try #require(tampered.payload.firstRange(of: Array("level2".utf8))).lowerBound + 5
        tampered.payload[index] = UInt8(ascii: "9")
        #expect(verifier.verifyTransaction(tampered.compact, now: Self.purchase).failureCheck == .signature)
        var badSignature = JWSParts(good)
        badSignature.signature[10] ^= 0x01
        #expect(verifier.verifyTransaction(badSignature.compact, now: Self.purchase).failureCheck == .signature)
        let otherBundle = try signer.signedTransaction(Self.transaction(environment: "Production", bundleId: "com.other"))
        #expect(verifier.verifyTransaction(otherBundle, now: Self.purchase).failureCheck == .bundle)
        let sandbox = try signer.signedTransaction(Self.transaction())
        #expect(verifier.verifyTransaction(sandbox, now: Self.purchase).failureCheck == .environment)
        var garbagePayload = JWSParts(good)
        garbagePayload.payload = Array("not json".utf8)
        #expect(verifier.verifyTransaction(garbagePayload.compact, now: Self.purchase).failureCheck == .format)
    }

    @Test func verifierIsSafeToShareAcrossTasks() async throws {
        let pki = try Self.pki()
        let jws = try TransactionSigner(pki: pki).signedTransaction(Self.transaction())
        let verifier = try Self.verifier(pki)
        let successes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<32 {
                group.addTask { (try? verifier.verifyTransaction(jws, now: Self.purchase).get()) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(successes == 32)
    }

    // MARK: - Notifications

    @Test(arguments: TransactionSigner.NotificationType.allCases)
    func notificationWithNestedTransactionVerifies(type: TransactionSigner.NotificationType) throws {
        let pki = try Self.pki()
        var transaction = Self.transaction()
        if type == .refund || type == .revoke { transaction.revocationDate = Self.purchase.addingTimeInterval(3600) }
        if type == .refund { transaction.revocationReason = 1 }
        let jws = try TransactionSigner(pki: pki).signedNotification(
            type, notificationUUID: "6d0c1f8e-7b1a-4a0e-9d55-2f2b8f3c1a77", transaction: transaction, signedDate: Self.purchase)
        let notification = try Self.verifier(pki).verifyNotification(jws, now: Self.purchase).get()
        #expect(notification.notificationType.rawValue == type.rawValue)
        #expect(notification.notificationUUID == "6d0c1f8e-7b1a-4a0e-9d55-2f2b8f3c1a77")
        #expect(notification.version == "2.0")
        let nested = try #require(notification.data?.transactionInfo)
        #expect(nested.transactionId == "1000000000000001")
        #expect(nested.revocationDate == transaction.revocationDate)
        #expect(nested.revocationReason == transaction.revocationReason.map(RevocationReason.init(rawValue:)))
        #expect(notification.data?.signedTransactionInfo != nil)
    }

    @Test func notificationForAnotherAppIsABundleFailure() throws {
        let pki = try Self.pki()
        let jws = try TransactionSigner(pki: pki).signedNotification(
            .refund, transaction: Self.transaction(bundleId: "com.other.app"), signedDate: Self.purchase)
        let result = try Self.verifier(pki).verifyNotification(jws, now: Self.purchase)
        #expect(result.failureCheck == .bundle)
        #expect(result.failureDetail?.hasPrefix("bundleId") == true)  // the notification's own, not the nested one
    }

    @Test func nestedTransactionForAnotherAppIsABundleFailure() throws {
        let pki = try Self.pki()
        let jws = try TransactionSigner(pki: pki).signedNotification(
            .refund, transaction: Self.transaction(bundleId: "com.other.app"), bundleId: Self.bundle, signedDate: Self.purchase)
        let result = try Self.verifier(pki).verifyNotification(jws, now: Self.purchase)
        #expect(result.failureCheck == .bundle)
        #expect(result.failureDetail?.hasPrefix("data.signedTransactionInfo") == true)
    }

    @Test func nestedTransactionFromAnotherPKIFailsItsChain() throws {
        let pki = try Self.pki()
        let foreign = try TransactionSigner(pki: try Self.pki()).signedTransaction(Self.transaction())
        let payload: [String: Any] = [
            "notificationType": "REFUND", "notificationUUID": "u", "signedDate": 1_795_946_400_000,
            "data": ["bundleId": Self.bundle, "environment": "Sandbox", "signedTransactionInfo": foreign],
        ]
        let jws = try TransactionSigner(pki: pki).sign(payload: payload)
        let result = try Self.verifier(pki).verifyNotification(jws, now: Self.purchase)
        #expect(result.failureCheck == .chain)
        #expect(result.failureDetail?.hasPrefix("data.signedTransactionInfo") == true)
    }

    @Test func tamperedNestedTransactionFailsItsSignature() throws {
        let pki = try Self.pki()
        let signer = TransactionSigner(pki: pki)
        var nested = JWSParts(try signer.signedTransaction(Self.transaction()))
        let index = try #require(nested.payload.firstRange(of: Array("level2".utf8))).lowerBound + 5
        nested.payload[index] = UInt8(ascii: "9")
        let payload: [String: Any] = [
            "notificationType": "REFUND", "notificationUUID": "u", "signedDate": 1_795_946_400_000,
            "data": ["bundleId": Self.bundle, "environment": "Sandbox", "signedTransactionInfo": nested.compact],
        ]
        let result = try Self.verifier(pki).verifyNotification(try signer.sign(payload: payload), now: Self.purchase)
        #expect(result.failureCheck == .signature)
    }

    @Test func summaryNotificationTakesBundleAndEnvironmentFromSummary() throws {
        let pki = try Self.pki()
        let payload: [String: Any] = [
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": "s",
            "signedDate": 1_795_946_400_000,
            "summary": ["bundleId": Self.bundle, "environment": "Production", "requestIdentifier": "r"],
        ]
        let jws = try TransactionSigner(pki: pki).sign(payload: payload)
        let notification = try Self.verifier(pki).verifyNotification(jws, now: Self.purchase).get()
        #expect(notification.notificationType.rawValue == "RENEWAL_EXTENSION")
        #expect(notification.subtype?.rawValue == "SUMMARY")
        #expect(notification.data == nil)
    }

    /// The signer's JWS: the header made once is the one made for the explicit `x5c`, every segment is unpadded
    /// base64url (bytes whose base64 holds `+`, `/` and `=`), and the signature verifies with the leaf's key.
    @Test func signerMakesStrictBase64URLSegments() throws {
        let pki = try Self.pki()
        let signer = TransactionSigner(pki: pki)
        let payload: [UInt8] = [0xFB, 0xFF, 0xBF, 0x3E, 0x3F, 0xFE, 0x7B, 0x7D]  // base64 "+/+/Pj/+e30="
        let standard = try signer.sign(payloadJSON: payload)
        let explicit = try signer.sign(payloadJSON: payload, x5c: pki.x5c)
        let parts = standard.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        #expect(parts[0] == explicit.split(separator: ".").first.map(String.init))
        #expect(!standard.contains { "+/=".contains($0) })
        #expect(Base64URL.decode(parts[1]) == payload)
        let header = try #require(Base64URL.decode(parts[0]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
        #expect(object["alg"] as? String == "ES256" && object["x5c"] as? [String] == pki.x5c)
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(throws: Never.self) {
            try ES256Verifier.verify(signature: signature, message: Array((parts[0] + "." + parts[1]).utf8), publicKey: pki.leaf.publicKey)
        }
        let other = try signer.sign(payloadJSON: payload, alg: "ES384")
        #expect(other.split(separator: ".").first.map(String.init) != parts[0])
    }
}
