public import DepotCore

/// A customer's transactions from Get Transaction History v2, every one verified (spec §3, §4).
public struct TransactionHistory: Sendable, Equatable {
    /// The environment that answered.
    public var environment: AppStoreEnvironment
    /// The app's Apple ID as Apple gave it (absent in sandbox).
    public var appAppleId: Int64?
    /// Every signed transaction of every page, verified and decoded, in Apple's order.
    public var transactions: [StoreKitTransaction]
    /// Pages read.
    public var pages: Int
    /// False when the page limit was reached while Apple still had more.
    public var isComplete: Bool

    /// A history with the given parts.
    public init(environment: AppStoreEnvironment, appAppleId: Int64?, transactions: [StoreKitTransaction],
                pages: Int, isComplete: Bool) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.transactions = transactions
        self.pages = pages
        self.isComplete = isComplete
    }
}
