/// Why a private key file cannot be used for ES256 signing. The descriptions never contain key
/// bytes: they name the problem only (the PEM label, the key type, libcrypto's reason code).
public enum PrivateKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data holds no PEM block at all.
    case notPEM
    /// A PEM block that is not an unencrypted PKCS#8 key (`-----BEGIN PRIVATE KEY-----`); the
    /// label it has instead, e.g. `EC PRIVATE KEY` (SEC 1) or `CERTIFICATE`.
    case notPKCS8(label: String)
    /// A password-protected PKCS#8 key (`ENCRYPTED PRIVATE KEY`).
    case encrypted
    /// The PKCS#8 structure inside the PEM block does not decode; libcrypto's reason.
    case unreadable(reason: String)
    /// A readable key that is not EC P-256; its type or curve (e.g. `RSA`, `secp384r1`).
    case notP256(found: String)

    public var description: String {
        switch self {
        case .notPEM: "not a PEM file (no -----BEGIN PRIVATE KEY----- block)"
        case .notPKCS8(let label): "a PEM \"\(label)\" block, not a PKCS#8 private key (-----BEGIN PRIVATE KEY-----)"
        case .encrypted: "an encrypted PKCS#8 key; App Store Connect issues it unencrypted"
        case .unreadable(let reason): "a PKCS#8 key that does not decode (\(reason))"
        case .notP256(let found): "a \(found) key, not EC P-256"
        }
    }
}
