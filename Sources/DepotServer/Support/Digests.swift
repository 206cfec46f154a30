import DepotCrypto

extension Hex {
    /// Lowercase hex SHA-256 of bytes.
    static func sha256(_ bytes: [UInt8]) -> String { encode(SHA256.hash(bytes)) }
}
