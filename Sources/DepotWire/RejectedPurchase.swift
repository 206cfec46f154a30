/// A purchase that did not release a pack (spec §4.2 `rejected`).
public struct RejectedPurchase: Sendable, Hashable, Codable {
    /// Why; the raw value is kept so a reason added later is not a decoding failure.
    public struct Reason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public var description: String { rawValue }

        /// Refunded or revoked.
        public static let revoked = Reason(rawValue: "revoked")
        /// A subscription that is not active.
        public static let expired = Reason(rawValue: "expired")
        /// Not in the catalog.
        public static let unknownProduct = Reason(rawValue: "unknown_product")
        /// The product unlocks no pack (a consumable, say).
        public static let noPack = Reason(rawValue: "no_pack")
        /// The purchase belongs to another app account (account policy).
        public static let boundToOtherAccount = Reason(rawValue: "bound_to_other_account")
    }

    public var productId: String?
    public var transactionId: String?
    public var reason: Reason

    public init(productId: String?, transactionId: String?, reason: Reason) {
        self.productId = productId
        self.transactionId = transactionId
        self.reason = reason
    }

    private enum CodingKeys: String, CodingKey { case productId, transactionId, reason }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(productId, forKey: .productId)
        try container.encode(transactionId, forKey: .transactionId)
        try container.encode(reason, forKey: .reason)
    }
}
