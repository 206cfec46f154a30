import COpenSSL

/// ECDSA P-256 with SHA-256 (JWS `ES256`, RFC 7518 §3.4) signature verification.
public enum ES256Verifier {
    /// RFC 7518 §3.4: the JWS signature is R and S as two 32-byte big-endian integers, 64 bytes.
    public static let signatureLength = 64

    /// Why a signature was refused.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The signature is not 64 bytes.
        case wrongLength(Int)
        /// The key is not an EC key on P-256 (its curve or type name).
        case wrongKey(String)
        /// The signature does not match the message and key.
        case mismatch

        public var description: String {
            switch self {
            case .wrongLength(let count): "ES256 signature is \(count) bytes, not 64"
            case .wrongKey(let name): "ES256 needs a P-256 key, not \(name)"
            case .mismatch: "signature does not match"
            }
        }
    }

    /// Verifies a raw `R‖S` signature over `message` (hashed here with SHA-256) with `publicKey`.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: PublicKey) throws(Failure) {
        guard signature.count == signatureLength else { throw .wrongLength(signature.count) }
        guard publicKey.isP256 else { throw .wrongKey(publicKey.curveName ?? publicKey.algorithmName) }
        guard let der = derSignature(rawRS: signature) else { throw .mismatch }
        OpenSSLErrorQueue.clear()
        guard let context = EVP_MD_CTX_new() else { throw .mismatch }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, publicKey.pointer) == 1 else {
            OpenSSLErrorQueue.clear()
            throw .mismatch
        }
        let status = der.withUnsafeBufferPointer { signatureBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                EVP_DigestVerify(context, signatureBuffer.baseAddress, signatureBuffer.count,
                                 messageBuffer.baseAddress, messageBuffer.count)
            }
        }
        guard status == 1 else {
            OpenSSLErrorQueue.clear()
            throw .mismatch
        }
    }

    /// Re-encodes `R‖S` as the DER `ECDSA-Sig-Value` SEQUENCE libcrypto verifies (RFC 3279 §2.2.3).
    static func derSignature(rawRS: [UInt8]) -> [UInt8]? {
        let half = rawRS.count / 2
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let numbers: (OpaquePointer?, OpaquePointer?) = rawRS.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, Int32(half), nil),
             BN_bin2bn(buffer.baseAddress! + half, Int32(half), nil))
        }
        guard let r = numbers.0, let s = numbers.1 else {
            BN_free(numbers.0)
            BN_free(numbers.1)
            return nil
        }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {  // on success the signature owns r and s
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_ECDSA_SIG(signature, &cursor)
        }
        return der
    }
}
