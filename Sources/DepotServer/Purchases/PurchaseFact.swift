import DepotCore
import Foundation
import Ledger

/// One validated purchase, whichever way it arrived (a receipt's `in_app` entry or a StoreKit 2 transaction).
struct PurchaseFact: Sendable, Equatable {
    var productID: String
    var transactionID: String
    var originalTransactionID: String
    var purchaseDate: Date
    var expiresDate: Date?
    var revocationDate: Date?
    var environment: String
    /// How it was validated (`verifyReceipt` or a locally verified JWS), as the ledger records it.
    var source: LedgerPurchase.Source

    init(receipt purchase: ReceiptPurchase, environment: String) {
        productID = purchase.productID
        transactionID = purchase.transactionID
        originalTransactionID = purchase.originalTransactionID
        purchaseDate = purchase.purchaseDate
        expiresDate = purchase.expiresDate
        revocationDate = purchase.cancellationDate
        self.environment = environment
        source = .receipt
    }

    init(transaction: StoreKitTransaction) {
        productID = transaction.productId
        transactionID = transaction.transactionId
        originalTransactionID = transaction.originalTransactionId
        purchaseDate = transaction.purchaseDate
        expiresDate = transaction.expiresDate
        revocationDate = transaction.revocationDate
        environment = transaction.environment.rawValue
        source = .jws
    }

    /// For each original transaction, its most recent transaction (a subscription's latest renewal).
    static func latestPerOriginal(_ facts: [PurchaseFact]) -> [PurchaseFact] {
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
