/// The answer to `POST /v1/receipts` (spec §4.2): the packs released and the purchases that released nothing.
public struct PurchaseAnswer: Sendable, Hashable, Codable {
    /// `Production` or `Sandbox` (absent when the server did not say).
    public var environment: String?
    /// Packs released, each with a fresh download token.
    public var entitlements: [Entitlement]
    /// Purchases that released nothing, with the reason.
    public var rejected: [RejectedPurchase]

    public init(environment: String?, entitlements: [Entitlement], rejected: [RejectedPurchase]) {
        self.environment = environment
        self.entitlements = entitlements
        self.rejected = rejected
    }

    /// One entitlement or rejection per line.
    private enum CodingKeys: String, CodingKey, WireLayoutKey {
        case environment, entitlements, rejected
        var startsLine: Bool { self != .environment }
        var elementsStartLines: Bool { self != .environment }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        environment = try container.decodeIfPresent(String.self, forKey: .environment)
        entitlements = try container.decodeIfPresent([Entitlement].self, forKey: .entitlements) ?? []
        rejected = try container.decodeIfPresent([RejectedPurchase].self, forKey: .rejected) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encode(entitlements, forKey: .entitlements)
        try container.encode(rejected, forKey: .rejected)
    }

    /// The entitlement for `pack`, if the purchase released it.
    public func entitlement(forPack pack: String) -> Entitlement? {
        entitlements.first { $0.pack == pack }
    }
}
