import AppStore
import DepotCrypto
import Foundation
import Testing

/// Apple's real certificates through DepotCrypto (vectors README `apple/`).
struct AppleCertificateTests {
    @Test func embeddedRootIsTheFixtureRoot() throws {
        let root = AppleRootCertificates.rootCAG3()
        #expect(root == (try Fixtures.appleRoot()))
        #expect(root.sha256Fingerprint.hexString == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        // As `openssl x509 -nameopt RFC2253 -subject` prints it.
        #expect(root.subjectSummary == "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3")
        #expect(root.issuerSummary == root.subjectSummary)
        #expect(root.notBefore == Date(timeIntervalSince1970: 1_398_881_946))  // 2014-04-30T18:19:06Z
        #expect(root.notAfter == Date(timeIntervalSince1970: 2_187_800_346))   // 2039-04-30T18:19:06Z
        #expect(root.publicKey.curveName == "secp384r1")
        #expect(!root.publicKey.isP256)
    }

    @Test func pemAndDERFilesParseToTheSameRoot() throws {
        let fromPEM = try X509Certificate.parsePEMOrDER(try Fixtures.bytes("apple/AppleRootCA-G3.pem"))
        #expect(fromPEM == [try Fixtures.appleRoot()])
    }

    @Test func leavesAndIntermediateCarryAppleMarkers() throws {
        let intermediate = try Fixtures.certificate("apple/AppleWWDRCA-G6.der")
        #expect(intermediate.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        #expect(!intermediate.hasExtension(oid: SignedDataVerifier.leafMarkerOID))
        for years in ["2021-2023", "2023-2025", "2025-2027"] {
            let leaf = try Fixtures.certificate("apple/AppStoreSigning-leaf-\(years).der")
            #expect(leaf.hasExtension(oid: SignedDataVerifier.leafMarkerOID))
            #expect(leaf.publicKey.isP256)
        }
        let current = try Fixtures.certificate("apple/AppStoreSigning-leaf-2025-2027.der")
        #expect(current.serialNumberHex == "47C287CDD9F9E7867F528ADA74DC7DB7")
    }

    struct ChainCase: Sendable, CustomTestStringConvertible {
        let leaf: String
        let time: TimeInterval
        let reason: String?
        var testDescription: String { "\(leaf) at \(time)" }
    }

    /// The `openssl verify -attime` table of the vectors README.
    @Test(arguments: [
        ChainCase(leaf: "2025-2027", time: 1_761_962_975, reason: nil),
        ChainCase(leaf: "2021-2023", time: 1_681_312_846, reason: nil),
        ChainCase(leaf: "2021-2023", time: 1_761_962_975, reason: "certificate has expired"),
        ChainCase(leaf: "2023-2025", time: 1_739_161_772, reason: nil),
        ChainCase(leaf: "2023-2025", time: 1_795_996_800, reason: "certificate has expired"),
    ])
    func realChainAtTime(_ testCase: ChainCase) throws {
        let verifier = CertificateChainVerifier(trustedRoots: [try Fixtures.appleRoot()])
        let result = verifier.verify(leaf: try Fixtures.certificate("apple/AppStoreSigning-leaf-\(testCase.leaf).der"),
                                     intermediates: [try Fixtures.certificate("apple/AppleWWDRCA-G6.der")],
                                     at: Date(timeIntervalSince1970: testCase.time))
        switch result {
        case .success(let chain):
            #expect(testCase.reason == nil)
            #expect(chain.certificates.count == 3)
        case .failure(let error):
            #expect(error.reason == testCase.reason)
        }
    }

    @Test func es256RefusesAP384Key() throws {
        #expect(throws: ES256Verifier.Failure.wrongKey("secp384r1")) {
            try ES256Verifier.verify(signature: [UInt8](repeating: 1, count: 64), message: [1],
                                     publicKey: AppleRootCertificates.rootCAG3().publicKey)
        }
    }
}
