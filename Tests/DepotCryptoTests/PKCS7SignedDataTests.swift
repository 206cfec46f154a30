import DepotCrypto
import Foundation
import Testing

/// Attached PKCS#7 SignedData: made and read back with libcrypto.
struct PKCS7SignedDataTests {
    static func signer() throws -> (X509Certificate, ECPrivateKey) {
        let key = try ECPrivateKey.generateP256()
        let certificate = try CertificateBuilder(subject: [("CN", "Receipt Signing")], notBefore: Date(timeIntervalSince1970: 0),
                                                 notAfter: Date(timeIntervalSince1970: 4_000_000_000), keyUsage: [.digitalSignature])
            .issue(for: key.publicKey, issuer: nil, signer: key)
        return (certificate, key)
    }

    @Test func contentRoundTrips() throws {
        let (certificate, key) = try Self.signer()
        let content = ASN1RecordSet.encode([ASN1Record(type: 2, value: ASN1RecordSet.utf8StringDER("com.example.depot"))])
        let der = try PKCS7SignedData.sign(content: content, signer: certificate, key: key)
        #expect(der.count > content.count + certificate.derBytes.count)
        #expect(try PKCS7SignedData.content(of: der) == content)
    }

    @Test func otherStructuresAreRefused() throws {
        let (certificate, key) = try Self.signer()
        let der = try PKCS7SignedData.sign(content: [1, 2, 3], signer: certificate, key: key)
        for bytes in [[], [0x30, 0x00], certificate.derBytes, der + [0], Array(der.prefix(der.count - 1)), Array("MIIB".utf8)] {
            #expect(throws: PKCS7SignedData.Failure.self) { try PKCS7SignedData.content(of: bytes) }
        }
    }
}
