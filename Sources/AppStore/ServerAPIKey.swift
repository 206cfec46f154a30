public import DepotCrypto
import Foundation

/// An In-App Purchase key from App Store Connect (Users and Access → Integrations → In-App
/// Purchase): the `.p8` private key, its key ID and the team's issuer ID. It signs the JWTs of
/// every App Store Server API call.
public struct ServerAPIKey: Sendable {
    /// The key's ID (the JWT header's `kid`).
    public let keyID: String
    /// The issuer ID (the JWT's `iss`).
    public let issuerID: String
    /// The EC P-256 private key.
    let privateKey: ECPrivateKey

    /// Largest key file read: a `.p8` is about 250 bytes.
    static let maximumFileBytes = 64 << 10

    /// A key from its parts; the IDs are checked like `load`'s.
    public init(keyID: String, issuerID: String, privateKey: ECPrivateKey) throws(ServerAPIKeyError) {
        guard !keyID.isEmpty, keyID.utf8.count <= 64, keyID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw .invalidKeyID
        }
        guard UUID(uuidString: issuerID) != nil else { throw .invalidIssuerID }
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
    }

    /// Reads the key file at `path` (`SubscriptionKey_<KEYID>.p8`: PKCS#8 PEM, EC P-256). Reads a
    /// file, so call it at start-up, not on an event loop.
    public static func load(path: String, keyID: String, issuerID: String) throws(ServerAPIKeyError) -> ServerAPIKey {
        let bytes: [UInt8]
        do {
            let url = URL(fileURLWithPath: path)
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values.isRegularFile == true else { throw ServerAPIKeyError.unreadableFile(path: path, reason: "not a regular file") }
            guard (values.fileSize ?? 0) <= maximumFileBytes else {
                throw ServerAPIKeyError.unreadableFile(path: path, reason: "larger than a key file (\(values.fileSize ?? 0) bytes)")
            }
            bytes = Array(try Data(contentsOf: url))
        } catch let error as ServerAPIKeyError {
            throw error
        } catch {
            let reason = (error as NSError).userInfo[NSUnderlyingErrorKey].map { "\($0)" } ?? error.localizedDescription
            throw .unreadableFile(path: path, reason: reason)
        }
        let key: ECPrivateKey
        do {
            key = try ECPrivateKey(pkcs8PEM: bytes)
        } catch {
            throw .invalidKey(path: path, error)
        }
        return try ServerAPIKey(keyID: keyID, issuerID: issuerID, privateKey: key)
    }
}
