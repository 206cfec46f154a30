public import DepotCrypto
public import Foundation

/// A throw-away App Store signing PKI for the simulated App Store: a self-signed root, an
/// intermediate and a signing leaf, all EC P-256, shaped like Apple's (marker extensions, CA
/// constraints, key usage). Generated at run time; nothing is committed. The server under test is
/// told to trust `rootDER`/`rootPEM` (`--apple-root-certs`).
public struct TestPKI: Sendable {
    /// Apple's WWDR intermediate marker extension.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"
    /// Apple's App Store signing leaf marker extension.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"

    /// The trust anchor (CA:TRUE).
    public let root: X509Certificate
    /// The intermediate (CA:TRUE, pathlen 0, marker OID unless generated without it).
    public let intermediate: X509Certificate
    /// The signing leaf (CA:FALSE, digitalSignature, marker OID unless generated without it).
    public let leaf: X509Certificate
    /// The leaf's private key: signs JWS.
    public let leafKey: ECPrivateKey
    /// The intermediate's private key (to issue more leaves).
    public let intermediateKey: ECPrivateKey

    /// Generates a PKI. Root and intermediate are valid over `validFrom...validUntil`; the leaf over
    /// `leafValidFrom...leafValidUntil` (defaulting to the same window), so a test can make an
    /// expired or not-yet-valid leaf. The `...CarriesAppleOID` switches build the negative variants.
    public static func generate(validFrom: Date, validUntil: Date,
                                leafValidFrom: Date? = nil, leafValidUntil: Date? = nil,
                                leafCarriesAppleOID: Bool = true,
                                intermediateCarriesAppleOID: Bool = true,
                                name: String = "Depot Simulated App Store") throws -> TestPKI {
        let rootKey = try ECPrivateKey.generateP256()
        let intermediateKey = try ECPrivateKey.generateP256()
        let leafKey = try ECPrivateKey.generateP256()
        let root = try CertificateBuilder(
            subject: [("C", "US"), ("O", name), ("OU", "Simulated Certification Authority"), ("CN", "\(name) Root CA")],
            notBefore: validFrom, notAfter: validUntil,
            basicConstraints: .certificateAuthority(pathLength: nil), keyUsage: [.keyCertSign, .cRLSign]
        ).issue(for: rootKey.publicKey, issuer: nil, signer: rootKey)
        let intermediate = try CertificateBuilder(
            subject: [("C", "US"), ("O", name), ("OU", "G6"), ("CN", "\(name) Intermediate CA")],
            notBefore: validFrom, notAfter: validUntil,
            basicConstraints: .certificateAuthority(pathLength: 0), keyUsage: [.keyCertSign, .cRLSign],
            markerExtensionOIDs: intermediateCarriesAppleOID ? [intermediateMarkerOID] : []
        ).issue(for: intermediateKey.publicKey, issuer: root, signer: rootKey)
        let leaf = try CertificateBuilder(
            subject: [("C", "US"), ("O", name), ("OU", "Simulated Developer Relations"), ("CN", "\(name) Signing")],
            notBefore: leafValidFrom ?? validFrom, notAfter: leafValidUntil ?? validUntil,
            basicConstraints: .endEntity, keyUsage: [.digitalSignature],
            markerExtensionOIDs: leafCarriesAppleOID ? [leafMarkerOID] : []
        ).issue(for: leafKey.publicKey, issuer: intermediate, signer: intermediateKey)
        return TestPKI(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey,
                       intermediateKey: intermediateKey)
    }

    /// The root as DER, for a file the server trusts.
    public var rootDER: [UInt8] { root.derBytes }
    /// The root as PEM, for a file the server trusts.
    public var rootPEM: String { root.pemString }
    /// The JWS `x5c` header value: standard base64 DER of leaf, intermediate and root.
    public var x5c: [String] { [leaf, intermediate, root].map { Data($0.derBytes).base64EncodedString() } }
}
