import COpenSSL
public import Foundation

/// An X.509 certificate (RFC 5280), parsed by libcrypto.
///
/// A final class owning its `X509` (freed in `deinit`). `@unchecked Sendable`: it is immutable
/// after init and libcrypto only reads the structure.
public final class X509Certificate: @unchecked Sendable, Equatable, CustomStringConvertible {
    let pointer: OpaquePointer

    /// The certificate's DER encoding.
    public let derBytes: [UInt8]
    /// The subject public key.
    public let publicKey: PublicKey
    /// Start of the validity period (RFC 5280 §4.1.2.5), whole seconds.
    public let notBefore: Date
    /// End of the validity period (inclusive), whole seconds.
    public let notAfter: Date

    /// Parses one DER certificate. Trailing bytes after the certificate are an error.
    public convenience init(der: [UInt8]) throws {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard buffer.count > 0 else { return nil }
            var cursor = buffer.baseAddress
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            if cursor != buffer.baseAddress.map({ $0 + buffer.count }) {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            throw CryptoError(operation: "parse certificate",
                              reason: OpenSSLErrorQueue.drain() ?? "not a single DER certificate")
        }
        try self.init(owning: parsed, der: der)
    }

    /// Takes over one reference to `pointer`. `der` is its encoding when already known.
    init(owning pointer: OpaquePointer, der: [UInt8]? = nil) throws {
        self.pointer = pointer
        guard let key = X509_get_pubkey(pointer) else {
            X509_free(pointer)
            throw CryptoError.drainingQueue("read certificate public key")
        }
        publicKey = PublicKey(owning: key)
        guard let start = X509Certificate.date(X509_get0_notBefore(pointer)),
              let end = X509Certificate.date(X509_get0_notAfter(pointer)) else {
            X509_free(pointer)
            throw CryptoError(operation: "parse certificate", reason: "unreadable validity dates")
        }
        notBefore = start
        notAfter = end
        derBytes = der ?? X509Certificate.encode(pointer)
    }

    deinit { X509_free(pointer) }

    /// Reads every certificate of a PEM file (`-----BEGIN CERTIFICATE-----` blocks, other blocks are
    /// skipped), or one DER certificate when the data is not PEM.
    public static func parsePEMOrDER(_ data: [UInt8]) throws -> [X509Certificate] {
        guard data.firstRange(of: Array("-----BEGIN".utf8)) != nil else {
            return [try X509Certificate(der: data)]
        }
        OpenSSLErrorQueue.clear()
        let pointers: [OpaquePointer] = try MemoryBIO.reading(data) { bio in
            var found: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                found.append(certificate)
            }
            return found
        }
        // The loop ends on "no start line" at the end of the input; anything else is damage.
        let lastError = ERR_peek_last_error()
        let endOfInput = ERR_GET_REASON(lastError) == PEM_R_NO_START_LINE
        guard !pointers.isEmpty, lastError == 0 || endOfInput else {
            pointers.forEach { X509_free($0) }
            throw CryptoError(operation: "parse PEM certificates",
                              reason: OpenSSLErrorQueue.drain() ?? "no certificate in PEM data")
        }
        OpenSSLErrorQueue.clear()
        var certificates: [X509Certificate] = []
        var pending = pointers[...]
        while let next = pending.popFirst() {
            do {
                certificates.append(try X509Certificate(owning: next))
            } catch {
                pending.forEach { X509_free($0) }
                throw error
            }
        }
        return certificates
    }

    /// The subject distinguished name in RFC 2253 form, e.g. `CN=Apple Root CA - G3,OU=...`.
    public var subjectSummary: String { X509Certificate.describe(X509_get_subject_name(pointer)) }

    /// The issuer distinguished name in RFC 2253 form.
    public var issuerSummary: String { X509Certificate.describe(X509_get_issuer_name(pointer)) }

    /// The serial number as uppercase hex (as `openssl x509 -serial` prints it).
    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(pointer), let number = ASN1_INTEGER_to_BN(serial, nil) else {
            return ""
        }
        defer { BN_free(number) }
        guard let text = BN_bn2hex(number) else { return "" }
        defer { depot_openssl_free(text) }
        return String(cString: text)
    }

    /// SHA-256 of the DER encoding (the usual certificate fingerprint).
    public var sha256Fingerprint: [UInt8] { SHA256.hash(derBytes) }

    /// The certificate as one PEM block.
    public var pemString: String {
        guard let bio = try? MemoryBIO(), PEM_write_bio_X509(bio.pointer, pointer) == 1 else { return "" }
        return bio.string
    }

    /// True when the certificate carries an extension with the dotted `oid` (critical or not),
    /// e.g. Apple's `1.2.840.113635.100.6.11.1`. False for a malformed OID string.
    public func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    public var description: String { "X509Certificate(\(subjectSummary), serial \(serialNumberHex))" }

    /// Certificates are equal when their DER encodings are.
    public static func == (lhs: X509Certificate, rhs: X509Certificate) -> Bool { lhs.derBytes == rhs.derBytes }

    static func encode(_ pointer: OpaquePointer) -> [UInt8] {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(pointer, &cursor)
        }
        return bytes
    }

    /// Converts an ASN1_TIME (UTCTime or GeneralizedTime, always UTC) to a Date.
    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    private static func describe(_ name: OpaquePointer?) -> String {
        guard let name, let bio = try? MemoryBIO() else { return "" }
        guard X509_NAME_print_ex(bio.pointer, name, 0, depot_xn_flag_rfc2253()) >= 0 else { return "" }
        return bio.string
    }
}
