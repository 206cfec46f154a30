public import Foundation

/// A pack the server released for a validated purchase (spec §4.2), with its download token.
///
/// Dates travel as RFC 3339 text (`expiresDate` is `null` for a purchase that does not expire), so an app can
/// also keep an entitlement between launches with any JSON coder.
public struct Entitlement: Sendable, Hashable, Codable {
    public var productId: String
    /// The pack ID, e.g. `level2`.
    public var pack: String
    public var transactionId: String
    public var originalTransactionId: String
    public var purchaseDate: Date?
    /// For subscriptions: when access ends.
    public var expiresDate: Date?
    /// The download token, sent as `Authorization: Bearer`.
    public var token: String
    public var tokenExpires: Date?
    /// The manifest path, e.g. `/v1/packs/level2/manifest` (redirects to the live version).
    public var manifest: String

    public init(productId: String, pack: String, transactionId: String, originalTransactionId: String,
                purchaseDate: Date?, expiresDate: Date?, token: String, tokenExpires: Date?, manifest: String) {
        self.productId = productId
        self.pack = pack
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.token = token
        self.tokenExpires = tokenExpires
        self.manifest = manifest
    }

    private enum CodingKeys: String, CodingKey {
        case productId, pack, transactionId, originalTransactionId, purchaseDate, expiresDate, token, tokenExpires, manifest
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        productId = try container.decode(String.self, forKey: .productId)
        pack = try container.decode(String.self, forKey: .pack)
        transactionId = try container.decode(String.self, forKey: .transactionId)
        originalTransactionId = try container.decodeIfPresent(String.self, forKey: .originalTransactionId) ?? transactionId
        purchaseDate = try container.decodeInternetDate(forKey: .purchaseDate)
        expiresDate = try container.decodeInternetDate(forKey: .expiresDate)
        token = try container.decode(String.self, forKey: .token)
        tokenExpires = try container.decodeInternetDate(forKey: .tokenExpires)
        manifest = try container.decodeIfPresent(String.self, forKey: .manifest) ?? WirePath.packManifest(pack: pack)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productId, forKey: .productId)
        try container.encode(pack, forKey: .pack)
        try container.encode(transactionId, forKey: .transactionId)
        try container.encode(originalTransactionId, forKey: .originalTransactionId)
        try container.encodeInternetDate(purchaseDate, forKey: .purchaseDate)
        try container.encodeInternetDate(expiresDate, forKey: .expiresDate)
        try container.encode(token, forKey: .token)
        try container.encodeInternetDate(tokenExpires, forKey: .tokenExpires)
        try container.encode(manifest, forKey: .manifest)
    }
}
