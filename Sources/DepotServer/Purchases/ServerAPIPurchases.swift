import AppStore
import DepotCore
import Foundation

/// The purchase paths that ask the App Store Server API (spec app-store-server-api §3–§5): legacy receipts
/// through Get Transaction History, restore from one transaction, and Apple's latest state of an expired
/// subscription. Every failure becomes a ``PurchaseFailure`` mapped as §2 says, logged without secrets.
struct ServerAPIPurchases: Sendable {
    let client: ServerAPIClient
    /// Receipts, with the one-minute cache and the sharing of identical lookups in flight.
    let receipts: ServerAPIReceiptValidator
    /// Whether `receipt` bodies come here (`--receipt-validation`), or go to `verifyReceipt`.
    let validatesReceipts: Bool
    let logger: Logger

    init(client: ServerAPIClient, validatesReceipts: Bool, logger: Logger) {
        self.client = client
        receipts = ServerAPIReceiptValidator(client: client)
        self.validatesReceipts = validatesReceipts
        self.logger = logger
    }

    /// §3: the purchases behind a legacy receipt, from the customer's verified history; none (and no call to
    /// Apple) for a receipt without in-app purchases. The environment is the one that answered.
    func receiptPurchases(_ receipt: String, now: Date, log: Logger? = nil) async throws(PurchaseFailure) -> (facts: [PurchaseFact], environment: String) {
        switch await receipts.validate(receipt: receipt, now: now) {
        case .success(.noPurchase):
            return ([], AppStoreEnvironment.production.rawValue)
        case .success(.history(let history)):
            warnIfCut(history, what: "receipt", log: log)
            return (history.transactions.map(PurchaseFact.init(transaction:)), history.environment.rawValue)
        case .failure(let failure):
            throw reported(failure, doing: "receipt validation", log: log)
        }
    }

    /// §4: the presented (verified) transactions and the whole history of the first one's customer.
    func restore(_ presented: [StoreKitTransaction], now: Date, log: Logger? = nil) async throws(PurchaseFailure) -> (facts: [PurchaseFact], environment: String) {
        guard let first = presented.first else { return ([], AppStoreEnvironment.production.rawValue) }
        switch await client.restoreHistory(from: first, now: now) {
        case .success(let history):
            warnIfCut(history, what: "restore", log: log)
            // Apple's copy of a transaction is the current one (a refund since the app's copy was signed).
            let fromApple = Set(history.transactions.map(\.transactionId))
            let facts = presented.filter { !fromApple.contains($0.transactionId) }.map(PurchaseFact.init(transaction:))
                + history.transactions.map(PurchaseFact.init(transaction:))
            return (facts, history.environment.rawValue)
        case .failure(let failure):
            throw reported(failure, doing: "restore", log: log)
        }
    }

    /// §5: for each original transaction whose newest presented transaction is an auto-renewable subscription
    /// that has expired, Apple's newest verified transaction joins the facts (so a renewal grants with its new
    /// expiry, and a refund since is seen). A lookup that fails leaves the presented transaction to be judged
    /// (expired); a signed item of Apple's answer that fails its check is a `422`.
    func withLatestSubscriptionState(_ presented: [StoreKitTransaction], now: Date, log: Logger? = nil) async throws(PurchaseFailure)
        -> [PurchaseFact] {
        var facts = presented.map(PurchaseFact.init(transaction:))
        let newest = PurchaseFact.latestPerOriginal(facts)
        let expired = presented.filter { transaction in
            transaction.type == .autoRenewableSubscription && transaction.revocationDate == nil
                && (transaction.expiresDate.map { $0 <= now } ?? true)
                && newest.contains { $0.transactionID == transaction.transactionId }
        }
        guard !expired.isEmpty else { return facts }
        let client = client
        let refreshed = await withTaskGroup(of: SubscriptionRefresh.self) { group in
            for transaction in expired {
                group.addTask { await client.latestSubscriptionState(of: transaction, now: now) }
            }
            var results: [SubscriptionRefresh] = []
            for await result in group { results.append(result) }
            return results
        }
        for refresh in refreshed {
            switch refresh {
            case .latest(let latest):
                facts.removeAll { $0.transactionID == latest.transactionId }
                facts.append(PurchaseFact(transaction: latest))
            case .invalid(let failure):
                throw reported(failure, doing: "subscription status", log: log)
            case .presented(let transaction, let failure):
                if let failure {
                    record(failure, doing: "subscription status of \(transaction.originalTransactionId) (judged on the presented transaction)",
                           log: log)
                }
            }
        }
        return facts
    }

    /// Logs `failure` (an error when Apple refused the configuration) on `log` (the request's logger; the
    /// service's own by default) and wraps it for the answer.
    func reported(_ failure: ServerAPIFailure, doing what: String, log: Logger? = nil) -> PurchaseFailure {
        record(failure, doing: what, log: log)
        return .serverAPI(failure)
    }

    private func record(_ failure: ServerAPIFailure, doing what: String, log: Logger?) {
        let logger = log ?? self.logger
        switch failure {
        case .misconfigured: logger.error(.appleMisconfigured, "App Store Server API \(what): \(failure)")
        case .unavailable: logger.warning(.appleUnavailable, "App Store Server API \(what): \(failure)")
        case .invalid: logger.info(.appleRefused, "App Store Server API \(what): \(failure)")
        }
    }

    private func warnIfCut(_ history: TransactionHistory, what: String, log: Logger?) {
        guard !history.isComplete else { return }
        (log ?? logger).warning(.appleRefused, "App Store Server API \(what): the history has more than \(history.pages) pages; judged on those")
    }
}
