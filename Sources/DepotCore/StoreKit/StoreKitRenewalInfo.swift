public import Foundation

/// The payload of a StoreKit 2 signed renewal info (`JWSRenewalInfoDecodedPayload`). It carries no
/// bundle ID; apart from `environment` and `signedDate` every field is optional.
public struct StoreKitRenewalInfo: Sendable, Equatable, Decodable {
    /// The subscription's original transaction.
    public var originalTransactionId: String?
    /// The product the subscription is on now.
    public var productId: String?
    /// The product it renews into.
    public var autoRenewProductId: String?
    /// 1 when auto-renew is on, 0 when off.
    public var autoRenewStatus: Int?
    /// Why the subscription expired (1 cancelled, 2 billing error, ...).
    public var expirationIntent: Int?
    /// End of the billing grace period.
    public var gracePeriodExpiresDate: Date?
    /// True while Apple retries billing.
    public var isInBillingRetryPeriod: Bool?
    /// Start of the current run of uninterrupted subscription periods.
    public var recentSubscriptionStartDate: Date?
    /// When the subscription next renews.
    public var renewalDate: Date?
    /// When the App Store signed this payload.
    public var signedDate: Date
    /// The environment that produced it.
    public var environment: AppStoreEnvironment

    private enum CodingKeys: String, CodingKey {
        case originalTransactionId, productId, autoRenewProductId, autoRenewStatus, expirationIntent
        case gracePeriodExpiresDate, isInBillingRetryPeriod, recentSubscriptionStartDate, renewalDate
        case signedDate, environment
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try container.decodeIdentifierIfPresent(forKey: .originalTransactionId)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        autoRenewProductId = try container.decodeIfPresent(String.self, forKey: .autoRenewProductId)
        autoRenewStatus = try container.decodeIfPresent(Int.self, forKey: .autoRenewStatus)
        expirationIntent = try container.decodeIfPresent(Int.self, forKey: .expirationIntent)
        gracePeriodExpiresDate = try container.decodeAppStoreDateIfPresent(forKey: .gracePeriodExpiresDate)
        isInBillingRetryPeriod = try container.decodeIfPresent(Bool.self, forKey: .isInBillingRetryPeriod)
        recentSubscriptionStartDate = try container.decodeAppStoreDateIfPresent(forKey: .recentSubscriptionStartDate)
        renewalDate = try container.decodeAppStoreDateIfPresent(forKey: .renewalDate)
        signedDate = try container.decodeAppStoreDate(forKey: .signedDate)
        environment = try container.decode(AppStoreEnvironment.self, forKey: .environment)
    }
}
