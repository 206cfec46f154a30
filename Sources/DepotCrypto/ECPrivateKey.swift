import COpenSSL

/// An EC P-256 private key for ES256 signing and certificate issuance (the simulated App Store's
/// test PKI). Keys are generated at run time; nothing is committed.
///
/// `@unchecked Sendable`: the key is immutable after init, and every signing operation uses its
/// own libcrypto context.
public final class ECPrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The matching public key.
    public let publicKey: PublicKey

    private init(owning pointer: OpaquePointer) throws {
        self.pointer = pointer
        let spki: [UInt8] = {
            let length = i2d_PUBKEY(pointer, nil)
            guard length > 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: Int(length))
            bytes.withUnsafeMutableBufferPointer { buffer in
                var cursor = buffer.baseAddress
                _ = i2d_PUBKEY(pointer, &cursor)
            }
            return bytes
        }()
        do {
            publicKey = try PublicKey(spkiDER: spki)
        } catch {
            EVP_PKEY_free(pointer)
            throw error
        }
        guard publicKey.isP256 else {
            EVP_PKEY_free(pointer)
            throw CryptoError(operation: "load private key", reason: "not a P-256 key")
        }
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Generates a fresh P-256 key.
    public static func generateP256() throws -> ECPrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw CryptoError.drainingQueue("generate P-256 key")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else {
            throw CryptoError.drainingQueue("generate P-256 key")
        }
        return try ECPrivateKey(owning: key)
    }

    /// Loads a PKCS#8 (or SEC 1) DER private key; it must be on P-256.
    public convenience init(der: [UInt8]) throws {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let key else { throw CryptoError.drainingQueue("parse private key") }
        try self.init(owning: key)
    }

    /// Loads an unencrypted PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`, the form of App
    /// Store Connect's `.p8` files) on P-256. Anything else is refused with the reason, never with
    /// the key's bytes; the decoded key material is wiped once libcrypto holds the key.
    public convenience init(pkcs8PEM pem: [UInt8]) throws(PrivateKeyError) {
        OpenSSLErrorQueue.clear()
        var label: UnsafeMutablePointer<CChar>?
        var header: UnsafeMutablePointer<CChar>?
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        let read: Int32
        do {
            read = try MemoryBIO.reading(pem) { bio in PEM_read_bio(bio, &label, &header, &data, &length) }
        } catch {
            throw .unreadable(reason: "out of memory")
        }
        defer {
            depot_openssl_free(label)
            depot_openssl_free(header)
            if let data { depot_openssl_clear_free(data, length) }
        }
        guard read == 1, let label, let data else {
            OpenSSLErrorQueue.clear()
            // A BEGIN line whose block does not decode (bad base64, no END line) is damage, not another format.
            if pem.firstRange(of: Array("-----BEGIN".utf8)) != nil { throw .unreadable(reason: "the PEM block does not decode") }
            throw .notPEM
        }
        switch String(cString: label) {
        case "PRIVATE KEY": break
        case "ENCRYPTED PRIVATE KEY": throw .encrypted
        case let other: throw .notPKCS8(label: other)
        }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(data)
        guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, length) else {
            throw .unreadable(reason: OpenSSLErrorQueue.drain() ?? "not a PrivateKeyInfo")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard cursor == UnsafePointer(data) + length else { throw .unreadable(reason: "bytes after the PrivateKeyInfo") }
        guard let key = EVP_PKCS82PKEY(info) else {
            throw .unreadable(reason: OpenSSLErrorQueue.drain() ?? "unsupported key algorithm")
        }
        let probe = PublicKey(describing: key)
        guard probe.isP256 else {
            EVP_PKEY_free(key)
            throw .notP256(found: probe.curveName ?? probe.algorithmName)
        }
        do {
            try self.init(owning: key)
        } catch {
            throw .unreadable(reason: (error as? CryptoError)?.reason ?? "the public key cannot be derived")
        }
    }

    /// The key as unencrypted PKCS#8 DER.
    public var pkcs8DER: [UInt8] {
        guard let bio = try? MemoryBIO(),
              i2d_PKCS8PrivateKey_bio(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else { return [] }
        return bio.bytes
    }

    /// The key as an unencrypted PKCS#8 PEM block (`-----BEGIN PRIVATE KEY-----`).
    public var pemString: String {
        guard let bio = try? MemoryBIO(),
              PEM_write_bio_PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else { return "" }
        return bio.string
    }

    /// Signs `message` with ECDSA P-256/SHA-256 and returns the JWS form: `R‖S`, 64 bytes
    /// (RFC 7518 §3.4).
    public func signES256(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError(operation: "sign", reason: "out of memory") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            throw CryptoError.drainingQueue("sign")
        }
        var length = 0
        var der = [UInt8](repeating: 0, count: 80)  // an ECDSA-Sig-Value on P-256 is at most 72 bytes
        length = der.count
        let status = message.withUnsafeBufferPointer { input in
            der.withUnsafeMutableBufferPointer { output in
                EVP_DigestSign(context, output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard status == 1 else { throw CryptoError.drainingQueue("sign") }
        return try ECPrivateKey.rawRS(fromDER: Array(der.prefix(length)))
    }

    /// Converts a DER `ECDSA-Sig-Value` to `R‖S` with each half left-padded to 32 bytes.
    static func rawRS(fromDER der: [UInt8]) throws -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw CryptoError.drainingQueue("decode signature") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var raw = [UInt8](repeating: 0, count: ES256Verifier.signatureLength)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, 32), BN_bn2binpad(s, buffer.baseAddress! + 32, 32))
        }
        guard written.0 == 32, written.1 == 32 else {
            throw CryptoError(operation: "decode signature", reason: "R or S longer than 32 bytes")
        }
        return raw
    }
}
