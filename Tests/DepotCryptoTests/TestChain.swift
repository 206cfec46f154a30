import DepotCrypto
import Foundation

/// A root → intermediate → leaf chain issued with `CertificateBuilder` for the tests.
struct TestChain {
    static let intermediateOID = "1.2.840.113635.100.6.2.1"
    static let leafOID = "1.2.840.113635.100.6.11.1"
    /// 2026-01-01T00:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_767_225_600)
    static let day: TimeInterval = 86_400

    let rootKey: ECPrivateKey
    let intermediateKey: ECPrivateKey
    let leafKey: ECPrivateKey
    let root: X509Certificate
    let intermediate: X509Certificate
    let leaf: X509Certificate

    init(leafValidity: ClosedRange<Date> = start...start.addingTimeInterval(365 * day),
         intermediateIsCA: Bool = true) throws {
        rootKey = try ECPrivateKey.generateP256()
        intermediateKey = try ECPrivateKey.generateP256()
        leafKey = try ECPrivateKey.generateP256()
        let caValidity = TestChain.start.addingTimeInterval(-TestChain.day)...TestChain.start.addingTimeInterval(3650 * TestChain.day)
        root = try CertificateBuilder(
            subject: [("C", "US"), ("O", "Depot Tests"), ("CN", "Depot Test Root")],
            notBefore: caValidity.lowerBound, notAfter: caValidity.upperBound,
            basicConstraints: .certificateAuthority(pathLength: nil), keyUsage: [.keyCertSign, .cRLSign]
        ).issue(for: rootKey.publicKey, issuer: nil, signer: rootKey)
        intermediate = try CertificateBuilder(
            subject: [("C", "US"), ("O", "Depot Tests"), ("CN", "Depot Test Intermediate")],
            notBefore: caValidity.lowerBound, notAfter: caValidity.upperBound,
            basicConstraints: intermediateIsCA ? .certificateAuthority(pathLength: 0) : .endEntity,
            keyUsage: [.keyCertSign, .cRLSign], markerExtensionOIDs: [TestChain.intermediateOID]
        ).issue(for: intermediateKey.publicKey, issuer: root, signer: rootKey)
        leaf = try CertificateBuilder(
            subject: [("C", "US"), ("O", "Depot Tests"), ("CN", "Depot Test Leaf")],
            notBefore: leafValidity.lowerBound, notAfter: leafValidity.upperBound,
            keyUsage: [.digitalSignature], markerExtensionOIDs: [TestChain.leafOID]
        ).issue(for: leafKey.publicKey, issuer: intermediate, signer: intermediateKey)
    }
}
