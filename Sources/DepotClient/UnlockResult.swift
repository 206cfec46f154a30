import Foundation

/// The answer to `POST /v1/receipts` (spec §4.2).
public struct UnlockResult: Sendable, Hashable, Decodable {
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

    private enum CodingKeys: String, CodingKey { case environment, entitlements, rejected }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        environment = try container.decodeIfPresent(String.self, forKey: .environment)
        entitlements = try container.decodeIfPresent([Entitlement].self, forKey: .entitlements) ?? []
        rejected = try container.decodeIfPresent([RejectedPurchase].self, forKey: .rejected) ?? []
    }

    /// The entitlement for `pack`, if the purchase released it.
    public func entitlement(forPack pack: String) -> Entitlement? {
        entitlements.first { $0.pack == pack }
    }

    /// The download token for `pack`; throws ``DepotClientError/revoked`` when the pack was not released
    /// (handy in a token-renewal closure).
    public func token(forPack pack: String) throws -> String {
        guard let entitlement = entitlement(forPack: pack) else { throw DepotClientError.revoked }
        return entitlement.token
    }
}
