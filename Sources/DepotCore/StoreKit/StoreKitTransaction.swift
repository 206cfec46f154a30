public import Foundation

/// The payload of a StoreKit 2 signed transaction (`JWSTransactionDecodedPayload`), decoded from
/// JSON after its signature was verified. Times are App Store milliseconds (whole or fractional)
/// turned into `Date`s; unknown keys are ignored.
public struct StoreKitTransaction: Sendable, Equatable, Decodable {
    /// This transaction's identifier.
    public var transactionId: String
    /// The first transaction of the purchase (stays the same across renewals and restores).
    public var originalTransactionId: String
    /// Subscription purchase events across devices, when present.
    public var webOrderLineItemId: String?
    /// The app's bundle identifier.
    public var bundleId: String
    /// The product identifier.
    public var productId: String
    /// The subscription group, for subscriptions.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer.
    public var purchaseDate: Date
    /// When the original transaction was purchased.
    public var originalPurchaseDate: Date
    /// When a subscription expires or renews.
    public var expiresDate: Date?
    /// Number of items bought.
    public var quantity: Int
    /// The product type.
    public var type: TransactionType
    /// The UUID the app attached to the purchase, if any.
    public var appAccountToken: String?
    /// Bought or family-shared.
    public var inAppOwnershipType: InAppOwnershipType
    /// When the App Store signed this payload.
    public var signedDate: Date
    /// Why Apple refunded or revoked the transaction.
    public var revocationReason: RevocationReason?
    /// When Apple refunded or revoked the transaction.
    public var revocationDate: Date?
    /// True when the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// The offer type (1 introductory, 2 promotional, 3 offer code, 4 win-back).
    public var offerType: Int?
    /// The environment that produced the transaction.
    public var environment: AppStoreEnvironment
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    /// Three-letter storefront country code.
    public var storefront: String?
    /// Apple's storefront identifier.
    public var storefrontId: String?
    /// Price in milliunits of `currency`.
    public var price: Int64?
    /// ISO 4217 currency code.
    public var currency: String?

    /// Creates a transaction from its parts (for tests and simulated stores).
    public init(transactionId: String, originalTransactionId: String, bundleId: String, productId: String,
                purchaseDate: Date, originalPurchaseDate: Date, type: TransactionType,
                environment: AppStoreEnvironment, signedDate: Date, quantity: Int = 1,
                inAppOwnershipType: InAppOwnershipType = .purchased, expiresDate: Date? = nil,
                revocationDate: Date? = nil, revocationReason: RevocationReason? = nil,
                appAccountToken: String? = nil, webOrderLineItemId: String? = nil,
                subscriptionGroupIdentifier: String? = nil) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.type = type
        self.environment = environment
        self.signedDate = signedDate
        self.quantity = quantity
        self.inAppOwnershipType = inAppOwnershipType
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.appAccountToken = appAccountToken
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
    }

    private enum CodingKeys: String, CodingKey {
        case transactionId, originalTransactionId, webOrderLineItemId, bundleId, productId
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity, type
        case appAccountToken, inAppOwnershipType, signedDate, revocationReason, revocationDate, isUpgraded
        case offerType, environment, transactionReason, storefront, storefrontId, price, currency
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = try container.decodeIdentifier(forKey: .transactionId)
        originalTransactionId = try container.decodeIdentifier(forKey: .originalTransactionId)
        webOrderLineItemId = try container.decodeIdentifierIfPresent(forKey: .webOrderLineItemId)
        bundleId = try container.decode(String.self, forKey: .bundleId)
        productId = try container.decode(String.self, forKey: .productId)
        subscriptionGroupIdentifier = try container.decodeIfPresent(String.self, forKey: .subscriptionGroupIdentifier)
        purchaseDate = try container.decodeAppStoreDate(forKey: .purchaseDate)
        originalPurchaseDate = try container.decodeAppStoreDate(forKey: .originalPurchaseDate)
        expiresDate = try container.decodeAppStoreDateIfPresent(forKey: .expiresDate)
        quantity = try container.decode(Int.self, forKey: .quantity)
        type = try container.decode(TransactionType.self, forKey: .type)
        appAccountToken = try container.decodeIfPresent(String.self, forKey: .appAccountToken)
        inAppOwnershipType = try container.decode(InAppOwnershipType.self, forKey: .inAppOwnershipType)
        signedDate = try container.decodeAppStoreDate(forKey: .signedDate)
        revocationReason = try container.decodeIfPresent(RevocationReason.self, forKey: .revocationReason)
        revocationDate = try container.decodeAppStoreDateIfPresent(forKey: .revocationDate)
        isUpgraded = try container.decodeIfPresent(Bool.self, forKey: .isUpgraded)
        offerType = try container.decodeIfPresent(Int.self, forKey: .offerType)
        environment = try container.decode(AppStoreEnvironment.self, forKey: .environment)
        transactionReason = try container.decodeIfPresent(String.self, forKey: .transactionReason)
        storefront = try container.decodeIfPresent(String.self, forKey: .storefront)
        storefrontId = try container.decodeIfPresent(String.self, forKey: .storefrontId)
        price = try container.decodeIfPresent(Int64.self, forKey: .price)
        currency = try container.decodeIfPresent(String.self, forKey: .currency)
    }
}
