import AppStore
import DepotCore
import DepotCrypto
import Foundation
import Testing

/// The three real Apple-signed JWS (chain → Apple Root CA - G3), see vectors README `real-jws/`.
struct RealAppleJWSTests {
    static let transactionFile = "real-jws/mingos-consumable-transaction.jws"
    static let notificationFile = "real-jws/aporat-test-notification.jws"
    static let renewalFile = "real-jws/awa-go-iap-renewal-info.jws"

    struct Vector: Sendable, CustomTestStringConvertible {
        let file: String
        let kind: SignedDataKind
        /// The bundle the payload is for (renewal info has none; any bundle will do).
        let bundle: String
        var testDescription: String { file }
    }

    static let vectors = [
        Vector(file: transactionFile, kind: .transaction, bundle: "com.goodheartapp"),
        Vector(file: notificationFile, kind: .notification, bundle: "com.Abilities"),
        Vector(file: renewalFile, kind: .renewalInfo, bundle: "com.Abilities"),
    ]

    func verifier(bundle: String, allowSandbox: Bool = true,
                  time: SignedDataVerifier.ChainValidationTime = .signedDate) throws -> SignedDataVerifier {
        SignedDataVerifier(trustedRoots: [try Fixtures.appleRoot()], bundleID: bundle,
                           allowSandbox: allowSandbox, chainValidationTime: time)
    }

    @Test func consumableTransactionVerifiesAtItsSignedDate() throws {
        let jws = try Fixtures.text(Self.transactionFile)
        let transaction = try verifier(bundle: "com.goodheartapp").verifyTransaction(jws, now: Fixtures.collectionDay).get()
        #expect(transaction.transactionId == "2000000847061981")
        #expect(transaction.originalTransactionId == "2000000847061981")
        #expect(transaction.bundleId == "com.goodheartapp")
        #expect(transaction.productId == "gh_super_good_ticket_1")
        #expect(transaction.purchaseDate == Date(appStoreMilliseconds: 1_738_645_560_000))
        #expect(transaction.originalPurchaseDate == transaction.purchaseDate)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .consumable)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate == Date(appStoreMilliseconds: 1_739_161_772_561))
        #expect(transaction.environment == .sandbox)
        #expect(transaction.transactionReason == "PURCHASE")
        #expect(transaction.storefront == "JPN")
        #expect(transaction.storefrontId == "143462")
        #expect(transaction.price == 230_000)
        #expect(transaction.currency == "JPY")
        #expect(transaction.expiresDate == nil && transaction.revocationDate == nil && transaction.appAccountToken == nil)
        #expect(transaction.webOrderLineItemId == nil)
    }

    @Test func verifiedPayloadIsExactlyTheDecodedJSONFile() throws {
        let jws = try Fixtures.text(Self.transactionFile)
        let verified = try verifier(bundle: "com.goodheartapp")
            .verifySignedData(jws, kind: .transaction, now: Fixtures.collectionDay).get()
        let payload = try JSONSerialization.jsonObject(with: verified.payload) as! NSDictionary
        let expected = try JSONSerialization.jsonObject(with: Data(try Fixtures.bytes("real-jws/mingos-consumable-transaction.json"))) as! NSDictionary
        #expect(payload.count == 16)
        #expect(payload == expected)
        #expect(verified.chainValidationTime == Date(appStoreMilliseconds: 1_739_161_772_561))
        #expect(verified.signingCertificate.derBytes == (try Fixtures.bytes("apple/AppStoreSigning-leaf-2023-2025.der")))
    }

    @Test func testNotificationVerifies() throws {
        let jws = try Fixtures.text(Self.notificationFile)
        let notification = try verifier(bundle: "com.Abilities").verifyNotification(jws, now: Fixtures.collectionDay).get()
        #expect(notification.notificationType == .test)
        #expect(notification.subtype == nil)
        #expect(notification.notificationUUID == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate == Date(appStoreMilliseconds: 1_662_122_492_884))
        #expect(notification.data?.bundleId == "com.Abilities")
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.data?.appAppleId == nil)
        #expect(notification.data?.transactionInfo == nil)
    }

    @Test func renewalInfoVerifiesWithoutABundleID() throws {
        let jws = try Fixtures.text(Self.renewalFile)
        // The configured bundle does not matter: renewal info carries none.
        let info = try verifier(bundle: "com.example.unrelated").verifyRenewalInfo(jws, now: Fixtures.collectionDay).get()
        #expect(info.originalTransactionId == "2000000335310644")
        #expect(info.productId == "co.ringalarm.swtich.quarterly2")
        #expect(info.autoRenewProductId == "co.ringalarm.swtich.quarterly2")
        #expect(info.autoRenewStatus == 1)
        #expect(info.environment == .sandbox)
        #expect(info.signedDate == Date(appStoreMilliseconds: 1_684_822_778_492))
        #expect(info.recentSubscriptionStartDate == Date(appStoreMilliseconds: 1_684_822_738_000))
    }

    /// Validating at "now" instead of `signedDate`: every leaf here expired before 2026-11-30.
    @Test(arguments: vectors)
    func chainFailsWhenValidatedAtTheCollectionDay(_ vector: Vector) throws {
        let jws = try Fixtures.text(vector.file)
        let atSignedDate = try verifier(bundle: vector.bundle)
            .verifySignedData(jws, kind: vector.kind, now: Fixtures.collectionDay)
        #expect(throws: Never.self) { try atSignedDate.get() }
        let atNow = try verifier(bundle: vector.bundle, time: .now)
            .verifySignedData(jws, kind: vector.kind, now: Fixtures.collectionDay)
        #expect(atNow.failureCheck == .chain)
        #expect(atNow.failureDetail?.contains("certificate has expired") == true)
    }

    /// With the signedDate policy `now` is irrelevant; with the now policy it decides.
    @Test func signedDateDrivesTheValidationTime() throws {
        let jws = try Fixtures.text(Self.transactionFile)
        let signedDate = Date(appStoreMilliseconds: 1_739_161_772_561)
        #expect(try verifier(bundle: "com.goodheartapp", time: .now).verifyTransaction(jws, now: signedDate).get().productId
            == "gh_super_good_ticket_1")
        #expect(try verifier(bundle: "com.goodheartapp").verifyTransaction(jws, now: .distantFuture).get().productId
            == "gh_super_good_ticket_1")
    }

    @Test func wrongBundleIsRefused() throws {
        let transaction = try verifier(bundle: "com.example").verifyTransaction(
            try Fixtures.text(Self.transactionFile), now: Fixtures.collectionDay)
        #expect(transaction.failureCheck == .bundle)
        let notification = try verifier(bundle: "com.goodheartapp").verifyNotification(
            try Fixtures.text(Self.notificationFile), now: Fixtures.collectionDay)
        #expect(notification.failureCheck == .bundle)
    }

    @Test(arguments: vectors)
    func productionOnlyConfigurationRefusesSandbox(_ vector: Vector) throws {
        let result = try verifier(bundle: vector.bundle, allowSandbox: false)
            .verifySignedData(try Fixtures.text(vector.file), kind: vector.kind, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .environment)
    }

    @Test(arguments: vectors)
    func appleTestCAAsOnlyRootRefusesRealData(_ vector: Vector) throws {
        let verifier = SignedDataVerifier(trustedRoots: [try Fixtures.testCA()], bundleID: vector.bundle, allowSandbox: true)
        let result = verifier.verifySignedData(try Fixtures.text(vector.file), kind: vector.kind, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .chain)
        #expect(result.failureDetail?.contains("unable to get local issuer certificate") == true)
    }

    @Test func flippedPayloadByteFailsTheSignature() throws {
        var parts = JWSParts(try Fixtures.text(Self.transactionFile))
        let index = try #require(parts.payload.firstRange(of: Array("gh_super_good_ticket_1".utf8))).lowerBound + 3
        parts.payload[index] ^= 0x01  // "gh_super..." → "gi_super...": still valid JSON, same signedDate
        let result = try verifier(bundle: "com.goodheartapp").verifyTransaction(parts.compact, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .signature)
    }

    @Test(arguments: [0, 31, 32, 63])
    func flippedSignatureByteFailsTheSignature(index: Int) throws {
        var parts = JWSParts(try Fixtures.text(Self.notificationFile))
        parts.signature[index] ^= 0x80
        let result = try verifier(bundle: "com.Abilities").verifyNotification(parts.compact, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .signature)
    }

    @Test func truncatedSignatureFailsTheSignature() throws {
        var parts = JWSParts(try Fixtures.text(Self.notificationFile))
        parts.signature.removeLast()
        let result = try verifier(bundle: "com.Abilities").verifyNotification(parts.compact, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .signature)
    }

    @Test func twoCertificateChainIsRefused() throws {
        var parts = JWSParts(try Fixtures.text(Self.transactionFile))
        parts.x5c = Array(parts.x5c.prefix(2))
        let result = try verifier(bundle: "com.goodheartapp").verifyTransaction(parts.compact, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .chain_length)
    }

    @Test func otherAlgorithmIsRefused() throws {
        for alg in ["ES384", "none", "HS256"] {
            var parts = JWSParts(try Fixtures.text(Self.transactionFile))
            parts.headerObject["alg"] = alg
            let result = try verifier(bundle: "com.goodheartapp").verifyTransaction(parts.compact, now: Fixtures.collectionDay)
            #expect(result.failureCheck == .algorithm, "alg \(alg)")
        }
    }

    @Test func thirdCertificateMustStillParse() throws {
        var parts = JWSParts(try Fixtures.text(Self.transactionFile))
        parts.x5c[2] = Data([0x30, 0x03, 0x02, 0x01, 0x01]).base64EncodedString()
        let result = try verifier(bundle: "com.goodheartapp").verifyTransaction(parts.compact, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .certificate)
        #expect(result.failureDetail?.hasPrefix("x5c[2]") == true)
    }
}

extension Result where Failure == VerificationFailure {
    /// The failed check (nil on success or a retryable failure).
    var failureCheck: VerificationCheck? {
        if case .failure(let failure) = self { return failure.check }
        return nil
    }

    /// The failure's detail text.
    var failureDetail: String? {
        switch self {
        case .success: nil
        case .failure(.invalid(_, let detail)), .failure(.retryable(let detail)): detail
        }
    }
}
