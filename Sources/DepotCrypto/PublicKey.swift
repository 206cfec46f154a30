import COpenSSL

/// A public key (an owned `EVP_PKEY`), e.g. a certificate's subject key.
///
/// `@unchecked Sendable`: the key is never mutated after init, and libcrypto allows concurrent
/// verifications with one `EVP_PKEY` (each creates its own operation context).
public final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// libcrypto's name for the key's curve ("prime256v1" for P-256, "secp384r1" for P-384), or
    /// nil for a key that is not on a named curve (RSA, ...).
    public let curveName: String?

    /// libcrypto's key type name ("EC", "RSA", ...).
    public let algorithmName: String

    /// Takes over one reference to `pointer`.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
        algorithmName = EVP_PKEY_get0_type_name(pointer).map { String(cString: $0) } ?? "unknown"
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        if EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1 {
            curveName = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else {
            OpenSSLErrorQueue.clear()
            curveName = nil
        }
    }

    /// Describes a key owned elsewhere (type and curve), e.g. a private key checked before it is
    /// adopted; takes a reference of its own.
    convenience init(describing pointer: OpaquePointer) {
        EVP_PKEY_up_ref(pointer)
        self.init(owning: pointer)
    }

    /// Parses a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7).
    public convenience init(spkiDER: [UInt8]) throws {
        let key: OpaquePointer? = spkiDER.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            if cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else { throw CryptoError.drainingQueue("parse SubjectPublicKeyInfo") }
        self.init(owning: key)
    }

    deinit { EVP_PKEY_free(pointer) }

    /// True for an EC key on NIST P-256 (secp256r1), the only curve ES256 allows (RFC 7518 §3.4).
    public var isP256: Bool { algorithmName == "EC" && curveName == "prime256v1" }

    /// The DER SubjectPublicKeyInfo.
    public var spkiDER: [UInt8] {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PUBKEY(pointer, &cursor)
        }
        return bytes
    }
}
