public import DepotCrypto

/// Why the In-App Purchase key cannot be used (a configuration error at start-up). Descriptions
/// name the file and the problem, never the key's bytes.
public enum ServerAPIKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key file cannot be read (missing, a directory, no permission, too large).
    case unreadableFile(path: String, reason: String)
    /// The file's contents are not an unencrypted PKCS#8 EC P-256 key.
    case invalidKey(path: String, PrivateKeyError)
    /// The key ID is empty or not printable ASCII.
    case invalidKeyID
    /// The issuer ID is not a UUID.
    case invalidIssuerID

    public var description: String {
        switch self {
        case .unreadableFile(let path, let reason): "cannot read the key file \(path): \(reason)"
        case .invalidKey(let path, let problem): "the key file \(path) is \(problem)"
        case .invalidKeyID: "the key ID must be the key's identifier from App Store Connect (printable ASCII, e.g. 2X9R4HXF34)"
        case .invalidIssuerID: "the issuer ID must be the UUID App Store Connect shows above the keys"
        }
    }
}
