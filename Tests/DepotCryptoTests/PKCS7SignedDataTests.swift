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

    /// The element-by-element DER reading (no certificate decoded) finds what `d2i_PKCS7` finds, with the
    /// certificate set present or not.
    @Test func skeletonReadingAgreesWithLibcryptoParse() throws {
        let (certificate, key) = try Self.signer()
        let (other, _) = try Self.signer()
        for content in [[], [0x31, 0x00], Array(repeating: 0xA5, count: 70_000)] as [[UInt8]] {
            let der = try PKCS7SignedData.sign(content: content, signer: certificate, key: key, intermediates: [other])
            #expect(PKCS7SignedData.skeletonContent(of: der) == content)
            #expect(try PKCS7SignedData.parsedContent(of: der) == content)
            #expect(try PKCS7SignedData.content(of: der) == content)
        }
    }

    /// Bytes that are not the strict shape are never read by the skeleton: trailing bytes, a cut, another
    /// content type (signedData's OID with its last byte changed), indefinite lengths.
    @Test func skeletonRefusesOtherShapes() throws {
        let (certificate, key) = try Self.signer()
        let der = try PKCS7SignedData.sign(content: [1, 2, 3], signer: certificate, key: key)
        let oid: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let at = try #require(Self.firstIndex(of: oid, in: der))
        var otherType = der
        otherType[at + oid.count - 1] = 0x03  // pkcs7-envelopedData
        var indefinite = der
        indefinite[1] = 0x80
        for bytes in [der + [0], Array(der.prefix(der.count - 1)), otherType, indefinite, Array(der.prefix(2))] {
            #expect(PKCS7SignedData.skeletonContent(of: bytes) == nil)
            #expect(throws: PKCS7SignedData.Failure.self) { try PKCS7SignedData.content(of: bytes) }
        }
    }

    /// A BER `SignedData` (indefinite lengths, as Xcode's receipts are) is not the skeleton's: it still reads
    /// through `d2i_PKCS7`.
    @Test func berFallsBackToLibcryptoParse() throws {
        let content: [UInt8] = [0x31, 0x03, 0x02, 0x01, 0x07]
        // ContentInfo { signedData, [0] { SignedData { 1, {}, { data, [0] { OCTET STRING } }, {} } } }, all indefinite.
        let ber: [UInt8] = [0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02, 0xA0, 0x80,
                            0x30, 0x80, 0x02, 0x01, 0x01, 0x31, 0x00,
                            0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01, 0xA0, 0x80,
                            0x04, UInt8(content.count)] + content + [0x00, 0x00, 0x00, 0x00,
                            0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(PKCS7SignedData.skeletonContent(of: ber) == nil)
        #expect(try PKCS7SignedData.content(of: ber) == content)
    }

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }
}
