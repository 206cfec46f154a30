import DepotCrypto
public import Foundation

extension SimulatedAPIKey {
    /// The file that names the key kept in a directory (`depot simulator`): `{"keyId": ..., "issuerId": ...}`, beside
    /// the key itself as `SubscriptionKey_<keyId>.p8`.
    public static let identityFileName = "api-key.json"

    /// The key kept in `directory`, made (through libcrypto, its `.p8` written 0600) on first use: the simulator
    /// accepts the same key across its runs, so a server started with the options it printed keeps working.
    public static func stored(in directory: String) throws -> SimulatedAPIKey {
        let identity = directory + "/" + identityFileName
        if FileManager.default.fileExists(atPath: identity) { return try load(from: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = try generate()
        try TestPKI.write(key.pkcs8PEM, to: key.keyFilePath(in: directory), secret: true)
        let names = try JSONSerialization.data(withJSONObject: ["keyId": key.keyID, "issuerId": key.issuerID], options: [.sortedKeys])
        // The identity last: its presence says the key file is there.
        try TestPKI.write(String(decoding: names, as: UTF8.self) + "\n", to: identity, secret: false)
        return key
    }

    /// Where `stored(in:)` keeps this key's `.p8` in `directory`.
    public func keyFilePath(in directory: String) -> String {
        directory + "/SubscriptionKey_\(keyID).p8"
    }

    private static func load(from directory: String) throws -> SimulatedAPIKey {
        let identity = directory + "/" + identityFileName
        guard let data = FileManager.default.contents(atPath: identity),
              let names = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let keyID = names["keyId"] as? String, let issuerID = names["issuerId"] as? String,
              !keyID.isEmpty, !keyID.contains("/") else {
            throw TestPKI.StorageError(description: "\(identity) does not name a key (keyId, issuerId)")
        }
        let path = directory + "/SubscriptionKey_\(keyID).p8"
        guard let pem = FileManager.default.contents(atPath: path) else { throw TestPKI.StorageError(description: "cannot read \(path)") }
        do {
            return SimulatedAPIKey(keyID: keyID, issuerID: issuerID, privateKey: try ECPrivateKey(pkcs8PEM: [UInt8](pem)))
        } catch {
            throw TestPKI.StorageError(description: "\(path): \(error)")
        }
    }
}
