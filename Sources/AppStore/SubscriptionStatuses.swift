public import DepotCore

/// The answer of Get All Subscription Statuses, every signed item verified (spec §5).
public struct SubscriptionStatuses: Sendable, Equatable {
    /// The latest state of one subscription (one original transaction in one group).
    public struct Entry: Sendable, Equatable {
        /// The subscription group.
        public var subscriptionGroupIdentifier: String?
        /// Active, expired, billing retry, grace period or revoked.
        public var status: SubscriptionStatus
        /// The original transaction of the subscription.
        public var originalTransactionId: String
        /// Its latest transaction, verified.
        public var transaction: StoreKitTransaction
        /// Its renewal info, verified, when Apple sent one.
        public var renewalInfo: StoreKitRenewalInfo?

        /// An entry with the given parts.
        public init(subscriptionGroupIdentifier: String?, status: SubscriptionStatus, originalTransactionId: String,
                    transaction: StoreKitTransaction, renewalInfo: StoreKitRenewalInfo?) {
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.status = status
            self.originalTransactionId = originalTransactionId
            self.transaction = transaction
            self.renewalInfo = renewalInfo
        }
    }

    /// The environment that answered.
    public var environment: AppStoreEnvironment
    /// The app's Apple ID as Apple gave it.
    public var appAppleId: Int64?
    /// Every subscription of the customer, group by group.
    public var entries: [Entry]

    /// A status answer with the given parts.
    public init(environment: AppStoreEnvironment, appAppleId: Int64?, entries: [Entry]) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.entries = entries
    }

    /// The newest transaction (latest expiry, then latest purchase) of `originalTransactionId`.
    public func newestTransaction(ofOriginal originalTransactionId: String) -> StoreKitTransaction? {
        entries.map(\.transaction).filter { $0.originalTransactionId == originalTransactionId }.max { a, b in
            let (aExpires, bExpires) = (a.expiresDate ?? a.purchaseDate, b.expiresDate ?? b.purchaseDate)
            return aExpires != bExpires ? aExpires < bExpires : a.purchaseDate < b.purchaseDate
        }
    }
}
