import COpenSSL
public import Foundation

/// Issues X.509 v3 certificates signed with an EC P-256 key (ECDSA with SHA-256), for test PKIs
/// such as the simulated App Store's root → intermediate → leaf.
public struct CertificateBuilder: Sendable {
    /// RFC 5280 §4.2.1.9 basic constraints.
    public enum BasicConstraints: Sendable, Equatable {
        /// `CA:FALSE` (an end-entity certificate).
        case endEntity
        /// `CA:TRUE`, with an optional `pathLenConstraint`.
        case certificateAuthority(pathLength: Int?)
    }

    /// RFC 5280 §4.2.1.3 key usage bits (the extension is written critical).
    public struct KeyUsage: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `digitalSignature`.
        public static let digitalSignature = KeyUsage(rawValue: 1 << 0)
        /// `keyCertSign`.
        public static let keyCertSign = KeyUsage(rawValue: 1 << 1)
        /// `cRLSign`.
        public static let cRLSign = KeyUsage(rawValue: 1 << 2)

        var configurationValue: String {
            var names = ["critical"]
            if contains(.digitalSignature) { names.append("digitalSignature") }
            if contains(.keyCertSign) { names.append("keyCertSign") }
            if contains(.cRLSign) { names.append("cRLSign") }
            return names.joined(separator: ",")
        }
    }

    /// Subject name attributes in order, e.g. `[("C", "US"), ("O", "Depot"), ("CN", "Test Root")]`.
    public var subject: [(attribute: String, value: String)]
    /// Start of validity (whole seconds).
    public var notBefore: Date
    /// End of validity (whole seconds, inclusive).
    public var notAfter: Date
    /// Basic constraints (written critical).
    public var basicConstraints: BasicConstraints
    /// Key usage; empty means no key usage extension.
    public var keyUsage: KeyUsage
    /// Non-critical extensions whose value is an ASN.1 NULL, keyed by dotted OID: the form of
    /// Apple's marker extensions (`1.2.840.113635.100.6.2.1`, `1.2.840.113635.100.6.11.1`).
    public var markerExtensionOIDs: [String]
    /// Serial number bytes (big-endian); nil picks 16 random bytes.
    public var serialNumber: [UInt8]?

    /// A builder with the given subject and validity, as an end entity with no extra extensions.
    public init(subject: [(attribute: String, value: String)], notBefore: Date, notAfter: Date,
                basicConstraints: BasicConstraints = .endEntity, keyUsage: KeyUsage = [],
                markerExtensionOIDs: [String] = [], serialNumber: [UInt8]? = nil) {
        self.subject = subject
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.basicConstraints = basicConstraints
        self.keyUsage = keyUsage
        self.markerExtensionOIDs = markerExtensionOIDs
        self.serialNumber = serialNumber
    }

    /// Issues a certificate for `subjectKey`, signed by `signer`. With `issuer` nil the certificate
    /// is self-signed (`signer` must then be the subject's own key); otherwise the issuer name and
    /// authority key identifier come from `issuer`.
    public func issue(for subjectKey: PublicKey, issuer: X509Certificate?,
                      signer: ECPrivateKey) throws -> X509Certificate {
        OpenSSLErrorQueue.clear()
        guard let certificate = X509_new() else { throw CryptoError.drainingQueue("create certificate") }
        var handedOver = false
        defer { if !handedOver { X509_free(certificate) } }

        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1 else {
            throw CryptoError.drainingQueue("set version")
        }
        try setSerial(certificate)
        try setNames(certificate, issuer: issuer)
        guard ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(notBefore.timeIntervalSince1970)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(notAfter.timeIntervalSince1970)) != nil else {
            throw CryptoError.drainingQueue("set validity")
        }
        guard X509_set_pubkey(certificate, subjectKey.pointer) == 1 else {
            throw CryptoError.drainingQueue("set public key")
        }
        try addExtensions(certificate, issuer: issuer)
        guard X509_sign(certificate, signer.pointer, EVP_sha256()) > 0 else {
            throw CryptoError.drainingQueue("sign certificate")
        }
        handedOver = true
        return try X509Certificate(owning: certificate)
    }

    private func setSerial(_ certificate: OpaquePointer) throws {
        var bytes = serialNumber ?? SecureRandom.bytes(16)
        if serialNumber == nil { bytes[0] &= 0x7F }  // RFC 5280 §4.1.2.2: a positive integer
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else {
            throw CryptoError.drainingQueue("set serial")
        }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil else {
            throw CryptoError.drainingQueue("set serial")
        }
    }

    private func setNames(_ certificate: OpaquePointer, issuer: X509Certificate?) throws {
        guard let name = X509_NAME_new() else { throw CryptoError.drainingQueue("build name") }
        defer { X509_NAME_free(name) }
        for entry in subject {
            let added = Array(entry.value.utf8).withUnsafeBufferPointer { value in
                X509_NAME_add_entry_by_txt(name, entry.attribute, depot_mbstring_asc(),
                                           value.baseAddress, Int32(value.count), -1, 0)
            }
            guard added == 1 else { throw CryptoError.drainingQueue("name attribute \(entry.attribute)") }
        }
        guard X509_set_subject_name(certificate, name) == 1 else { throw CryptoError.drainingQueue("set subject") }
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? name
        guard X509_set_issuer_name(certificate, issuerName) == 1 else { throw CryptoError.drainingQueue("set issuer") }
    }

    private func addExtensions(_ certificate: OpaquePointer, issuer: X509Certificate?) throws {
        var context = X509V3_CTX()  // zeroed: no configuration database
        X509V3_set_ctx(&context, issuer?.pointer ?? certificate, certificate, nil, nil, 0)

        switch basicConstraints {
        case .endEntity:
            try add(NID_basic_constraints, "critical,CA:FALSE", to: certificate, context: &context)
        case .certificateAuthority(let pathLength):
            let value = pathLength.map { "critical,CA:TRUE,pathlen:\($0)" } ?? "critical,CA:TRUE"
            try add(NID_basic_constraints, value, to: certificate, context: &context)
        }
        if !keyUsage.isEmpty {
            try add(NID_key_usage, keyUsage.configurationValue, to: certificate, context: &context)
        }
        try add(NID_subject_key_identifier, "hash", to: certificate, context: &context)
        try add(NID_authority_key_identifier, "keyid:always", to: certificate, context: &context)
        for oid in markerExtensionOIDs {
            try addMarker(oid: oid, to: certificate)
        }
    }

    private func add(_ nid: Int32, _ value: String, to certificate: OpaquePointer,
                     context: inout X509V3_CTX) throws {
        guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
            throw CryptoError.drainingQueue("extension \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(certificate, ext, -1) == 1 else { throw CryptoError.drainingQueue("add extension") }
    }

    private func addMarker(oid: String, to certificate: OpaquePointer) throws {
        guard let object = OBJ_txt2obj(oid, 1) else { throw CryptoError.drainingQueue("OID \(oid)") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw CryptoError.drainingQueue("extension value") }
        defer { ASN1_OCTET_STRING_free(value) }
        let asn1Null: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, asn1Null, Int32(asn1Null.count)) == 1,
              let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value) else {
            throw CryptoError.drainingQueue("extension \(oid)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(certificate, ext, -1) == 1 else { throw CryptoError.drainingQueue("add extension \(oid)") }
    }
}
