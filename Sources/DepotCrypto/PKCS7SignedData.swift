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
    public static func content(of der: [UInt8]) throws(Failure) -> [UInt8] {
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
