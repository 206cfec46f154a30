public import DepotCrypto
public import Foundation

/// An In-App Purchase key the simulated App Store accepts, as App Store Connect would issue it: a
/// key ID, the team's issuer ID and an EC P-256 private key (its PKCS#8 PEM is the `.p8` file).
public struct SimulatedAPIKey: Sendable {
    /// The key's ID (`kid`).
    public let keyID: String
    /// The issuer ID (`iss`), a UUID.
    public let issuerID: String
    /// The private key; the store checks signatures with its public key.
    public let privateKey: ECPrivateKey

    /// A fresh key with a random 10-character ID.
    public static func generate(issuerID: String = UUID().uuidString.lowercased()) throws -> SimulatedAPIKey {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let id = String(SecureRandom.bytes(10).map { alphabet[Int($0) % alphabet.count] })
        return SimulatedAPIKey(keyID: id, issuerID: issuerID, privateKey: try ECPrivateKey.generateP256())
    }

    /// A key from its parts.
    public init(keyID: String, issuerID: String, privateKey: ECPrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
    }

    /// The `.p8` file's contents (PKCS#8 PEM).
    public var pkcs8PEM: String { privateKey.pemString }

    /// Writes the `.p8` file (`SubscriptionKey_<KEYID>.p8`) into `directory` and returns its path.
    public func writeKeyFile(into directory: String) throws -> String {
        let path = keyFilePath(in: directory)
        try pkcs8PEM.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
