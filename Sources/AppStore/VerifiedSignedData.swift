public import DepotCore
public import DepotCrypto
public import Foundation

/// A signed payload that passed every check of its kind, before it is decoded into a model.
public struct VerifiedSignedData: Sendable {
    /// The payload JSON bytes (authenticated by the signature).
    public let payload: Data
    /// `signedDate`, when the payload has one.
    public let signedDate: Date?
    /// The time the certificate chain was validated at.
    public let chainValidationTime: Date
    /// The environment that was accepted.
    public let environment: AppStoreEnvironment
    /// The bundle ID that matched (nil for renewal info, which has none).
    public let bundleId: String?
    /// The leaf certificate whose key verified the signature.
    public let signingCertificate: X509Certificate
}
