import COpenSSL

/// PKCS#7 `SignedData` (RFC 2315 §9) through libcrypto: reading the encapsulated content of an
/// attached signature (an App Store app receipt is one) and making one (the simulated App Store's
/// receipts).
public enum PKCS7SignedData {
    /// Why DER bytes are not an attached `SignedData`.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, e.g. "not PKCS#7" or libcrypto's reason.
        public let reason: String
        public var description: String { reason }
    }

    /// The content octets of a DER `ContentInfo` holding `SignedData` with `data` content. The
    /// signature is not checked: callers read identifiers from it and get their trust elsewhere.
    /// Trailing bytes after the structure are refused.
    ///
    /// Strict DER (definite lengths, a primitive content OCTET STRING: App Store receipts) is read
    /// element by element with `ASN1_get_object` (`skeletonContent`), which leaves the certificate set
    /// and the signer infos undecoded: `d2i_PKCS7` decodes every certificate's public key, which costs
    /// OpenSSL 3 about a millisecond per receipt. Anything else (BER, as Xcode's receipts use, or a
    /// structure that is not SignedData) goes through `d2i_PKCS7`, which also words the refusals.
    public static func content(of der: [UInt8]) throws(Failure) -> [UInt8] {
        if let content = skeletonContent(of: der) { return content }
        return try parsedContent(of: der)
    }

    /// `content(of:)` through `d2i_PKCS7` alone (every certificate decoded).
    public static func parsedContent(of der: [UInt8]) throws(Failure) -> [UInt8] {
        OpenSSLErrorQueue.clear()
        let parsed: (UnsafeMutablePointer<PKCS7>?, Bool) = der.withUnsafeBufferPointer { buffer in
            guard buffer.count > 0 else { return (nil, false) }
            var cursor = buffer.baseAddress
            let p7 = d2i_PKCS7(nil, &cursor, buffer.count)
            return (p7, cursor == buffer.baseAddress.map { $0 + buffer.count })
        }
        guard let p7 = parsed.0 else {
            OpenSSLErrorQueue.clear()
            throw Failure(reason: "not a DER PKCS#7 structure")
        }
        defer { PKCS7_free(p7) }
        guard parsed.1 else { throw Failure(reason: "bytes after the PKCS#7 structure") }
        guard let content = depot_pkcs7_signed_data_content(p7) else {
            throw Failure(reason: "not a PKCS#7 SignedData with attached data content")
        }
        let length = Int(ASN1_STRING_length(content))
        guard length > 0, let bytes = ASN1_STRING_get0_data(content) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// DER of the OIDs `pkcs7-signedData` (1.2.840.113549.1.7.2) and `pkcs7-data` (…1.7.1), content octets.
    private static let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    private static let dataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]

    /// The encapsulated content of a strict-DER `ContentInfo { signedData, [0] SignedData }` whose
    /// `SignedData` is `{ version INTEGER, digestAlgorithms SET, encapContentInfo { data, [0] OCTET
    /// STRING }, [0] certificates OPTIONAL, [1] crls OPTIONAL, signerInfos SET }` (RFC 2315 §9.1) and
    /// nothing after; nil for any other bytes (the caller then asks `d2i_PKCS7`).
    package static func skeletonContent(of der: [UInt8]) -> [UInt8]? {
        var outer = DERCursor(der)
        guard let contentInfo = outer.next(universal: V_ASN1_SEQUENCE, constructed: true), outer.isAtEnd else { return nil }
        var info = outer.inside(contentInfo)
        guard let type = info.next(universal: V_ASN1_OBJECT, constructed: false), info.content(of: type) == signedDataOID,
              let explicit = info.next(context: 0), info.isAtEnd else { return nil }
        var wrapper = info.inside(explicit)
        guard let signedData = wrapper.next(universal: V_ASN1_SEQUENCE, constructed: true), wrapper.isAtEnd else { return nil }
        var fields = wrapper.inside(signedData)
        guard fields.next(universal: V_ASN1_INTEGER, constructed: false) != nil,
              fields.next(universal: V_ASN1_SET, constructed: true) != nil,
              let encapsulated = fields.next(universal: V_ASN1_SEQUENCE, constructed: true) else { return nil }
        _ = fields.next(context: 0)  // certificates
        _ = fields.next(context: 1)  // crls
        guard fields.next(universal: V_ASN1_SET, constructed: true) != nil, fields.isAtEnd else { return nil }
        var inner = fields.inside(encapsulated)
        guard let innerType = inner.next(universal: V_ASN1_OBJECT, constructed: false), inner.content(of: innerType) == dataOID,
              let innerExplicit = inner.next(context: 0), inner.isAtEnd else { return nil }
        var octets = inner.inside(innerExplicit)
        guard let content = octets.next(universal: V_ASN1_OCTET_STRING, constructed: false), octets.isAtEnd else { return nil }
        return octets.content(of: content)
    }

    /// Signs `content` (attached, binary) with `key` as `signer`, carrying `signer` and
    /// `intermediates` in the certificate set; returns the DER `ContentInfo`.
    public static func sign(content: [UInt8], signer: X509Certificate, key: ECPrivateKey,
                            intermediates: [X509Certificate] = []) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard let certificates = depot_sk_x509_new_null() else { throw CryptoError.drainingQueue("PKCS#7 certificates") }
        defer { depot_sk_x509_free(certificates) }
        for certificate in intermediates where depot_sk_x509_push(certificates, certificate.pointer) <= 0 {
            throw CryptoError.drainingQueue("PKCS#7 certificates")
        }
        let signed: UnsafeMutablePointer<PKCS7>? = try MemoryBIO.reading(content) { bio in
            PKCS7_sign(signer.pointer, key.pointer, certificates, bio, PKCS7_BINARY)
        }
        guard let signed else { throw CryptoError.drainingQueue("PKCS#7 sign") }
        defer { PKCS7_free(signed) }
        let length = i2d_PKCS7(signed, nil)
        guard length > 0 else { throw CryptoError.drainingQueue("PKCS#7 encode") }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PKCS7(signed, &cursor)
        }
        return der
    }
}
