import DepotCrypto
import Foundation
import Testing

struct X509CertificateTests {
    @Test func builtCertificateRoundTripsThroughDERAndPEM() throws {
        let chain = try TestChain()
        let parsed = try X509Certificate(der: chain.leaf.derBytes)
        #expect(parsed == chain.leaf)
        let fromPEM = try X509Certificate.parsePEMOrDER(Array(chain.leaf.pemString.utf8))
        #expect(fromPEM == [chain.leaf])
        #expect(chain.leaf.pemString.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    }

    @Test func pemFileMayHoldSeveralCertificatesAndOtherBlocks() throws {
        let chain = try TestChain()
        let text = chain.leafKey.pemString + "comment line\n" + chain.root.pemString + chain.intermediate.pemString
        let certificates = try X509Certificate.parsePEMOrDER(Array(text.utf8))
        #expect(certificates == [chain.root, chain.intermediate])
    }

    @Test func derFileHoldsOneCertificate() throws {
        let chain = try TestChain()
        #expect(try X509Certificate.parsePEMOrDER(chain.root.derBytes) == [chain.root])
    }

    @Test func readsNamesDatesSerialAndKey() throws {
        let chain = try TestChain()
        let serial: [UInt8] = [0x01, 0x23, 0x45]
        let certificate = try CertificateBuilder(
            subject: [("C", "US"), ("O", "Depot"), ("CN", "Named")],
            notBefore: TestChain.start, notAfter: TestChain.start.addingTimeInterval(TestChain.day),
            serialNumber: serial
        ).issue(for: chain.leafKey.publicKey, issuer: chain.intermediate, signer: chain.intermediateKey)
        #expect(certificate.subjectSummary == "CN=Named,O=Depot,C=US")
        #expect(certificate.issuerSummary == "CN=Depot Test Intermediate,O=Depot Tests,C=US")
        #expect(certificate.serialNumberHex == "012345")
        #expect(certificate.notBefore == TestChain.start)
        #expect(certificate.notAfter == TestChain.start.addingTimeInterval(TestChain.day))
        #expect(certificate.publicKey.isP256)
        #expect(certificate.publicKey.curveName == "prime256v1")
        #expect(certificate.publicKey.spkiDER == chain.leafKey.publicKey.spkiDER)
        #expect(certificate.sha256Fingerprint == SHA256.hash(certificate.derBytes))
    }

    @Test func findsMarkerExtensionsByOID() throws {
        let chain = try TestChain()
        #expect(chain.leaf.hasExtension(oid: TestChain.leafOID))
        #expect(!chain.leaf.hasExtension(oid: TestChain.intermediateOID))
        #expect(chain.intermediate.hasExtension(oid: TestChain.intermediateOID))
        #expect(chain.intermediate.hasExtension(oid: "2.5.29.19"))  // basicConstraints
        #expect(!chain.root.hasExtension(oid: TestChain.leafOID))
        #expect(!chain.leaf.hasExtension(oid: "not an oid"))
    }

    @Test(arguments: [
        [UInt8](),
        [0x30],
        [0x30, 0x03, 0x02, 0x01, 0x01],
        Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8),
        Array("-----BEGIN NOTHING-----\n".utf8),
    ])
    func refusesGarbage(_ bytes: [UInt8]) {
        #expect(throws: CryptoError.self) { try X509Certificate.parsePEMOrDER(bytes) }
    }

    @Test func refusesTrailingBytesAfterDER() throws {
        let chain = try TestChain()
        #expect(throws: CryptoError.self) { try X509Certificate(der: chain.leaf.derBytes + [0]) }
        #expect(throws: CryptoError.self) { try X509Certificate(der: Array(chain.leaf.derBytes.dropLast())) }
    }
}
