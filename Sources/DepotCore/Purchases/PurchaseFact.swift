public import Foundation

/// One validated purchase, whichever way it arrived (a receipt's `in_app` entry or a StoreKit 2 transaction).
public struct PurchaseFact: Sendable, Equatable {
    /// How the purchase was validated.
    public enum Source: Sendable, Equatable {
        /// A legacy app receipt checked through Apple's `verifyReceipt`.
        case receipt
        /// A StoreKit 2 signed transaction (JWS) verified locally.
        case jws
    }

    public var productID: String
    public var transactionID: String
    public var originalTransactionID: String
    public var purchaseDate: Date
    public var expiresDate: Date?
    public var revocationDate: Date?
    /// `Production` or `Sandbox`.
    public var environment: String
    public var source: Source

    public init(productID: String, transactionID: String, originalTransactionID: String, purchaseDate: Date,
                expiresDate: Date? = nil, revocationDate: Date? = nil, environment: String, source: Source) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.environment = environment
        self.source = source
    }

    /// A purchase from a `verifyReceipt` answer, in the environment that answered.
    public init(receipt purchase: ReceiptPurchase, environment: String) {
        self.init(productID: purchase.productID, transactionID: purchase.transactionID,
                  originalTransactionID: purchase.originalTransactionID, purchaseDate: purchase.purchaseDate,
                  expiresDate: purchase.expiresDate, revocationDate: purchase.cancellationDate, environment: environment,
                  source: .receipt)
    }

    /// A verified StoreKit 2 transaction.
    public init(transaction: StoreKitTransaction) {
        self.init(productID: transaction.productId, transactionID: transaction.transactionId,
                  originalTransactionID: transaction.originalTransactionId, purchaseDate: transaction.purchaseDate,
                  expiresDate: transaction.expiresDate, revocationDate: transaction.revocationDate,
                  environment: transaction.environment.rawValue, source: .jws)
    }

    /// For each original transaction, its most recent transaction (a subscription's latest renewal), in the
    /// order the original transactions first appear. Ties on the purchase date go to the larger transaction ID.
    public static func latestPerOriginal(_ facts: [PurchaseFact]) -> [PurchaseFact] {
        var order: [String] = []
        var latest: [String: PurchaseFact] = [:]
        for fact in facts {
            if let current = latest[fact.originalTransactionID] {
                if fact.purchaseDate > current.purchaseDate
                    || (fact.purchaseDate == current.purchaseDate && fact.transactionID > current.transactionID) {
                    latest[fact.originalTransactionID] = fact
                }
            } else {
                order.append(fact.originalTransactionID)
                latest[fact.originalTransactionID] = fact
            }
        }
        return order.compactMap { latest[$0] }
    }
}
