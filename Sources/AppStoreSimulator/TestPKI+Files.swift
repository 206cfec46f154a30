import DepotCrypto
public import Foundation

extension TestPKI {
    /// The file names of a PKI kept in a directory (`depot simulator`): certificates as PEM, keys as PKCS#8 PEM.
    public enum FileName {
        public static let root = "root.pem"
        static let intermediate = "intermediate.pem"
        static let leaf = "leaf.pem"
        static let intermediateKey = "intermediate-key.pem"
        static let leafKey = "leaf-key.pem"
    }

    /// Why a stored PKI could not be used.
    public struct StorageError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The PKI kept in `directory`, made (and written there, keys 0600) on first use: the simulator signs with the
    /// same root across its runs, so a server told to trust `directory/root.pem` keeps trusting it. A fresh one is
    /// valid from two years before `now` to ten years after.
    public static func stored(in directory: String, now: Date = Date()) throws -> TestPKI {
        let fm = FileManager.default
        let root = directory + "/" + FileName.root
        if fm.fileExists(atPath: root) { return try load(from: directory) }
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let pki = try generate(validFrom: now.addingTimeInterval(-2 * 365 * 86_400), validUntil: now.addingTimeInterval(10 * 365 * 86_400))
        try write(pki.intermediateKey.pemString, to: directory + "/" + FileName.intermediateKey, secret: true)
        try write(pki.leafKey.pemString, to: directory + "/" + FileName.leafKey, secret: true)
        try write(pki.intermediate.pemString, to: directory + "/" + FileName.intermediate, secret: false)
        try write(pki.leaf.pemString, to: directory + "/" + FileName.leaf, secret: false)
        // The root last: its presence says the rest is there.
        try write(pki.root.pemString, to: root, secret: false)
        return pki
    }

    private static func load(from directory: String) throws -> TestPKI {
        func bytes(_ name: String) throws -> [UInt8] {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else {
                throw StorageError(description: "cannot read \(directory)/\(name)")
            }
            return [UInt8](data)
        }
        func certificate(_ name: String) throws -> X509Certificate {
            guard let first = try? X509Certificate.parsePEMOrDER(try bytes(name)).first else {
                throw StorageError(description: "\(directory)/\(name) is not a certificate")
            }
            return first
        }
        func key(_ name: String) throws -> ECPrivateKey {
            do { return try ECPrivateKey(pkcs8PEM: try bytes(name)) } catch {
                throw StorageError(description: "\(directory)/\(name): \(error)")
            }
        }
        return TestPKI(root: try certificate(FileName.root), intermediate: try certificate(FileName.intermediate),
                       leaf: try certificate(FileName.leaf), leafKey: try key(FileName.leafKey),
                       intermediateKey: try key(FileName.intermediateKey))
    }

    /// Writes `text` to `path` through a temporary file (0600 when `secret`, else 0644).
    static func write(_ text: String, to path: String, secret: Bool) throws {
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8),
                                             attributes: [.posixPermissions: secret ? 0o600 : 0o644]) else {
            throw StorageError(description: "cannot write \(path)")
        }
        try FileManager.default.moveItem(atPath: temporary, toPath: path)
    }
}
