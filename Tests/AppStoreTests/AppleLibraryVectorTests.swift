import AppStore
import DepotCore
import DepotCrypto
import Foundation
import Testing

/// apple/app-store-server-library-swift's own test resources: signed by Apple's test CA
/// (`certs/testCA.der`), never by Apple. See vectors README `apple-library/`.
struct AppleLibraryVectorTests {
    /// Apple's `EFFECTIVE_DATE` for its chain tests: 2025-11-01T02:09:35Z.
    static let effectiveDate = Date(timeIntervalSince1970: 1_761_962_975)

    func testCAVerifier(allowSandbox: Bool = true, bundle: String = "com.example") throws -> SignedDataVerifier {
        SignedDataVerifier(trustedRoots: [try Fixtures.testCA()], bundleID: bundle, allowSandbox: allowSandbox)
    }

    @Test func testNotificationIsValidWithTheTestCA() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/testNotification")
        let notification = try testCAVerifier().verifyNotification(jws, now: Fixtures.collectionDay).get()
        #expect(notification.notificationType == .test)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.data?.appAppleId == 1234)
        #expect(notification.data?.bundleId == "com.example")
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.version == nil)
        // Its x5c[2] is not byte-equal to testCA.der: trust comes from the configuration only.
        let x5c = JWSParts(jws).x5c
        #expect(Array(Data(base64Encoded: x5c[2])!) != (try Fixtures.testCA()).derBytes)
    }

    @Test func transactionInfoIsValidWithTheTestCA() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/transactionInfo")
        let verified = try testCAVerifier().verifySignedData(jws, kind: .transaction, now: Fixtures.collectionDay).get()
        #expect(verified.bundleId == "com.example")
        #expect(verified.environment == .sandbox)
        #expect(verified.signedDate == Date(appStoreMilliseconds: 1_672_956_154_000))
        // Its payload has only three keys, too few for a full transaction model.
        #expect(try testCAVerifier().verifyTransaction(jws, now: Fixtures.collectionDay).failureCheck == .format)
    }

    @Test func transactionInfoForAnotherBundleIsRefused() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/transactionInfo")
        let result = try testCAVerifier(bundle: "com.example.x").verifyTransaction(jws, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .bundle)
    }

    @Test func renewalInfoIsValidWithTheTestCA() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/renewalInfo")
        let info = try testCAVerifier().verifyRenewalInfo(jws, now: Fixtures.collectionDay).get()
        #expect(info.environment == .sandbox)
        #expect(info.signedDate == Date(appStoreMilliseconds: 1_672_956_154_000))
        #expect(info.originalTransactionId == nil)
    }

    @Test(arguments: ["testNotification", "transactionInfo", "renewalInfo", "wrongBundleId"])
    func testCADataIsRefusedWithTheRealRoot(file: String) throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/\(file)")
        let verifier = SignedDataVerifier(trustedRoots: [try Fixtures.appleRoot()], bundleID: "com.example", allowSandbox: true)
        #expect(verifier.verifySignedData(jws, kind: .notification, now: Fixtures.collectionDay).failureCheck == .chain)
    }

    @Test func productionConfigurationRefusesTheSandboxNotification() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/testNotification")
        #expect(try testCAVerifier(allowSandbox: false).verifyNotification(jws, now: Fixtures.collectionDay).failureCheck
            == .environment)
    }

    @Test func notificationWithoutTopLevelBundleIsNotATransaction() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/testNotification")
        #expect(try testCAVerifier().verifyTransaction(jws, now: Fixtures.collectionDay).failureCheck == .bundle)
    }

    @Test func missingX5CHeaderIsAFormatError() throws {
        let jws = try Fixtures.text("apple-library/mock_signed_data/missingX5CHeaderClaim")
        #expect(try testCAVerifier().verifyNotification(jws, now: Fixtures.collectionDay).failureCheck == .format)
    }

    @Test func wrongBundleNotificationWithoutSignedDateIsABundleFailure() throws {
        // No signedDate: the chain is validated at `now` (valid until 2033), then the bundle differs.
        let jws = try Fixtures.text("apple-library/mock_signed_data/wrongBundleId")
        let result = try testCAVerifier().verifyNotification(jws, now: Fixtures.collectionDay)
        #expect(result.failureCheck == .bundle)
        #expect(result.failureDetail?.contains("com.example.wrong") == true)
        // At a `now` past the test chain's validity, the chain fails first.
        let late = try testCAVerifier().verifyNotification(jws, now: Date(timeIntervalSince1970: 2_280_946_846))
        #expect(late.failureCheck == .chain)
    }

    @Test(arguments: ["xcode-signed-transaction", "xcode-signed-renewal-info", "xcode-signed-app-transaction"])
    func xcodeSignedDataIsRefused(file: String) throws {
        let jws = try Fixtures.text("apple-library/xcode/\(file)")
        let verifier = SignedDataVerifier(trustedRoots: [try Fixtures.appleRoot()],
                                          bundleID: "com.example.naturelab.backyardbirds.example", allowSandbox: true)
        #expect(verifier.verifyTransaction(jws, now: Fixtures.collectionDay).failureCheck == .chain_length)
        #expect(verifier.verifyRenewalInfo(jws, now: Fixtures.collectionDay).failureCheck == .chain_length)
    }

    // MARK: - Apple's test-chain certificates: OID policy after the chain, before the signature

    struct ChainCase: Sendable, CustomTestStringConvertible {
        let name: String
        let leaf: String
        let intermediate: String
        let realRoot: Bool
        let time: Date
        let expected: VerificationCheck
        var testDescription: String { name }
    }

    static let chainCases = [
        ChainCase(name: "valid chain reaches the signature check", leaf: "testLeaf", intermediate: "testIntermediate",
                  realRoot: false, time: effectiveDate, expected: .signature),
        ChainCase(name: "intermediate with 6.2.2 instead of 6.2.1", leaf: "testLeaf-forInvalidOIDIntermediate",
                  intermediate: "testIntermediate-invalidOID", realRoot: false, time: effectiveDate, expected: .oid),
        ChainCase(name: "leaf with 6.11.2 instead of 6.11.1", leaf: "testLeaf-invalidOID",
                  intermediate: "testIntermediate", realRoot: false, time: effectiveDate, expected: .oid),
        ChainCase(name: "invalid-OID leaf in 2042 is expired first", leaf: "testLeaf-invalidOID",
                  intermediate: "testIntermediate", realRoot: false,
                  time: Date(timeIntervalSince1970: 2_280_946_846), expected: .chain),
        ChainCase(name: "test chain under the real Apple root", leaf: "testLeaf", intermediate: "testIntermediate",
                  realRoot: true, time: effectiveDate, expected: .chain),
    ]

    /// The certificates come from Apple's tests; nobody has their keys, so the JWS carries a dummy
    /// signature and the checks before `signature` decide.
    @Test(arguments: chainCases)
    func testChainPolicy(_ testCase: ChainCase) throws {
        let leaf = try Fixtures.certificate("apple-library/test-chain/\(testCase.leaf).der")
        let intermediate = try Fixtures.certificate("apple-library/test-chain/\(testCase.intermediate).der")
        let root = try testCase.realRoot ? Fixtures.appleRoot() : Fixtures.testCA()
        let parts = try JWSParts(
            header: ["alg": "ES256", "x5c": JWSParts.x5c([leaf, intermediate, root])],
            payload: ["bundleId": "com.example", "environment": "Sandbox",
                      "signedDate": testCase.time.appStoreMilliseconds])
        let verifier = try testCAVerifier()
        let result = testCase.realRoot
            ? SignedDataVerifier(trustedRoots: [root], bundleID: "com.example", allowSandbox: true)
                .verifySignedData(parts.compact, kind: .transaction, now: Fixtures.collectionDay)
            : verifier.verifySignedData(parts.compact, kind: .transaction, now: Fixtures.collectionDay)
        #expect(result.failureCheck == testCase.expected, "\(result)")
    }

    @Test func testLeafPublicKeyMatchesItsSPKIFile() throws {
        let leaf = try Fixtures.certificate("apple-library/test-chain/testLeaf.der")
        let spki = try Fixtures.bytes("apple-library/test-chain/testLeaf-publicKey.spki.der")
        #expect(leaf.publicKey.spkiDER == spki)
        #expect(try PublicKey(spkiDER: spki).isP256)
    }
}
