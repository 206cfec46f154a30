public import DepotCore
import DepotWire
public import Foundation

/// Transaction endpoints: Get Transaction History v2, Get Transaction Info, Get All Subscription
/// Statuses, and the lookups built on them (restore, Apple's latest subscription state).
extension ServerAPIClient {
    /// Get Transaction History v2 (`GET /inApps/v2/history/{transactionId}`), then with `revision`
    /// while `hasMore`, at most `maximumHistoryPages` pages. The answer's `bundleId` must be the
    /// configured one (else `misconfigured`), its `appAppleId` the configured one in Production (else
    /// `invalid` with `app_id`), and every signed transaction must verify (else `invalid` with its
    /// check) in the environment that answered. `startingIn` sandbox asks sandbox only.
    public func transactionHistory(for transactionID: String, startingIn: AppStoreEnvironment? = nil,
                                   now: Date) async -> Result<TransactionHistory, ServerAPIFailure> {
        let segment: String
        switch Self.pathSegment(transactionID, what: "transaction ID") {
        case .success(let value): segment = value
        case .failure(let failure): return .failure(failure)
        }
        var request = Request(name: "transaction_history", path: "/inApps/v2/history/" + segment)
        let first: (body: Data, environment: AppStoreEnvironment)
        switch await lookUp(request, startingIn: startingIn, what: "transaction", now: now) {
        case .success(let answer): first = answer
        case .failure(let failure): return .failure(failure)
        }
        let environment = first.environment
        var body = first.body
        var transactions: [StoreKitTransaction] = []
        var appAppleId: Int64?
        var pages = 0
        while true {
            guard let page = ServerAPIWire.decode(ServerAPIWire.History.self, from: body) else {
                return .failure(Self.unreadable("transaction_history", environment, defaultRetryAfter: configuration.defaultRetryAfter))
            }
            pages += 1
            if let failure = checkApp(bundleId: page.bundleId, appAppleId: page.appAppleId, environment: environment,
                                      endpoint: "transaction_history") {
                return .failure(failure)
            }
            appAppleId = page.appAppleId
            for (index, jws) in (page.signedTransactions ?? []).enumerated() {
                switch verifiedTransaction(jws, field: "signedTransactions[\(index)] of page \(pages)", environment: environment, now: now) {
                case .success(let transaction): transactions.append(transaction)
                case .failure(let failure): return .failure(failure)
                }
            }
            guard page.hasMore == true else { break }
            guard pages < configuration.maximumHistoryPages else {
                return .success(TransactionHistory(environment: environment, appAppleId: appAppleId, transactions: transactions,
                                                   pages: pages, isComplete: false))
            }
            guard let revision = page.revision, !revision.isEmpty else {
                return .failure(.unavailable(retryAfter: configuration.defaultRetryAfter, appleErrorCode: nil,
                                             reason: "transaction_history (\(environment)): hasMore without a revision"))
            }
            request.query = [("revision", revision)]
            switch await send(request, to: environment, now: now) {
            case .success(let next): body = next
            case .transactionNotFound:
                return .failure(.invalid(check: nil, appleErrorCode: ServerAPIStatusPolicy.transactionNotFoundCode,
                                         reason: "transaction_history (\(environment)): the transaction vanished between pages"))
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(TransactionHistory(environment: environment, appAppleId: appAppleId, transactions: transactions,
                                           pages: pages, isComplete: true))
    }

    /// Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`): the transaction, verified.
    public func transactionInfo(for transactionID: String, startingIn: AppStoreEnvironment? = nil,
                                now: Date) async -> Result<StoreKitTransaction, ServerAPIFailure> {
        let segment: String
        switch Self.pathSegment(transactionID, what: "transaction ID") {
        case .success(let value): segment = value
        case .failure(let failure): return .failure(failure)
        }
        let request = Request(name: "transaction_info", path: "/inApps/v1/transactions/" + segment)
        switch await lookUp(request, startingIn: startingIn, what: "transaction", now: now) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let answer):
            guard let jws = ServerAPIWire.decode(ServerAPIWire.TransactionInfo.self, from: answer.body)?.signedTransactionInfo else {
                return .failure(Self.unreadable("transaction_info", answer.environment, defaultRetryAfter: configuration.defaultRetryAfter))
            }
            return verifiedTransaction(jws, field: "signedTransactionInfo", environment: answer.environment, now: now)
        }
    }

    /// Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`), every
    /// `signedTransactionInfo` and `signedRenewalInfo` verified; the app checks as for the history.
    public func subscriptionStatuses(for transactionID: String, startingIn: AppStoreEnvironment? = nil,
                                     now: Date) async -> Result<SubscriptionStatuses, ServerAPIFailure> {
        let segment: String
        switch Self.pathSegment(transactionID, what: "transaction ID") {
        case .success(let value): segment = value
        case .failure(let failure): return .failure(failure)
        }
        let request = Request(name: "subscription_statuses", path: "/inApps/v1/subscriptions/" + segment)
        let answer: (body: Data, environment: AppStoreEnvironment)
        switch await lookUp(request, startingIn: startingIn, what: "transaction", now: now) {
        case .success(let value): answer = value
        case .failure(let failure): return .failure(failure)
        }
        guard let statuses = ServerAPIWire.decode(ServerAPIWire.Statuses.self, from: answer.body) else {
            return .failure(Self.unreadable("subscription_statuses", answer.environment, defaultRetryAfter: configuration.defaultRetryAfter))
        }
        if let failure = checkApp(bundleId: statuses.bundleId, appAppleId: statuses.appAppleId, environment: answer.environment,
                                  endpoint: "subscription_statuses") {
            return .failure(failure)
        }
        var entries: [SubscriptionStatuses.Entry] = []
        for (groupIndex, group) in (statuses.data ?? []).enumerated() {
            for (index, last) in (group.lastTransactions ?? []).enumerated() {
                let field = "data[\(groupIndex)].lastTransactions[\(index)]"
                guard let jws = last.signedTransactionInfo, let status = last.status else {
                    return .failure(.invalid(check: .format, appleErrorCode: nil,
                                             reason: "subscription_statuses: \(field) has no status or signedTransactionInfo"))
                }
                let transaction: StoreKitTransaction
                switch verifiedTransaction(jws, field: field + ".signedTransactionInfo", environment: answer.environment, now: now) {
                case .success(let value): transaction = value
                case .failure(let failure): return .failure(failure)
                }
                var renewalInfo: StoreKitRenewalInfo?
                if let renewal = last.signedRenewalInfo {
                    switch verifier.verifyRenewalInfo(renewal, now: now) {
                    case .success(let value) where value.environment == answer.environment: renewalInfo = value
                    case .success(let value):
                        return .failure(Self.environmentMismatch(field + ".signedRenewalInfo", value.environment, answer.environment))
                    case .failure(let failure): return .failure(Self.itemFailure(failure, field: field + ".signedRenewalInfo",
                                                                                 retryAfter: configuration.defaultRetryAfter))
                    }
                }
                entries.append(SubscriptionStatuses.Entry(subscriptionGroupIdentifier: group.subscriptionGroupIdentifier,
                                                          status: SubscriptionStatus(rawValue: status),
                                                          originalTransactionId: last.originalTransactionId ?? transaction.originalTransactionId,
                                                          transaction: transaction, renewalInfo: renewalInfo))
            }
        }
        return .success(SubscriptionStatuses(environment: answer.environment, appAppleId: statuses.appAppleId, entries: entries))
    }

    /// Restore from one transaction (spec §4): the whole history of the customer behind a verified
    /// transaction the app sent, looked up by its `originalTransactionId` in its own environment.
    public func restoreHistory(from transaction: StoreKitTransaction, now: Date) async -> Result<TransactionHistory, ServerAPIFailure> {
        await transactionHistory(for: transaction.originalTransactionId, startingIn: transaction.environment, now: now)
    }

    /// Apple's latest state of an expired auto-renewable purchase (spec §5): the newest verified
    /// `signedTransactionInfo` of its original transaction in Get All Subscription Statuses. A
    /// failed lookup falls back to the presented transaction, never to a grant; a signed item that
    /// fails its check is `invalid`.
    public func latestSubscriptionState(of presented: StoreKitTransaction, now: Date) async -> SubscriptionRefresh {
        switch await subscriptionStatuses(for: presented.originalTransactionId, startingIn: presented.environment, now: now) {
        case .success(let statuses):
            guard let newest = statuses.newestTransaction(ofOriginal: presented.originalTransactionId) else {
                return .presented(presented, failure: .invalid(check: nil, appleErrorCode: nil,
                                                               reason: "subscription_statuses has no entry for the original transaction"))
            }
            return .latest(newest)
        case .failure(let failure) where failure.check != nil && failure.check != .format:
            return .invalid(failure)
        case .failure(let failure):
            return .presented(presented, failure: failure)
        }
    }

    // MARK: - Checks shared by the endpoints

    /// The answer's `bundleId` (when present) must be ours; with an app Apple ID configured, a
    /// Production answer's `appAppleId` (when present) must be it.
    func checkApp(bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment, endpoint: String) -> ServerAPIFailure? {
        if let bundleId, bundleId != configuration.bundleID {
            return .misconfigured(httpStatus: nil, appleErrorCode: nil,
                                  reason: "\(endpoint) (\(environment)) answered for bundle \(JSONText.string(bundleId)), not \(JSONText.string(configuration.bundleID)) (check --bundle-id and the key)")
        }
        if let expected = configuration.appAppleID, environment == .production, let appAppleId, appAppleId != expected {
            return .invalid(check: .app_id, appleErrorCode: nil,
                            reason: "\(endpoint) (\(environment)) answered for app \(appAppleId), not \(expected)")
        }
        return nil
    }

    /// Verifies one signed transaction of an answer; it must come from the environment that answered.
    func verifiedTransaction(_ jws: String, field: String, environment: AppStoreEnvironment,
                             now: Date) -> Result<StoreKitTransaction, ServerAPIFailure> {
        switch verifier.verifyTransaction(jws, now: now) {
        case .success(let transaction) where transaction.environment == environment:
            return .success(transaction)
        case .success(let transaction):
            return .failure(Self.environmentMismatch(field, transaction.environment, environment))
        case .failure(let failure):
            return .failure(Self.itemFailure(failure, field: field, retryAfter: configuration.defaultRetryAfter))
        }
    }

    /// A failed signed item: `invalid` with its check, or `unavailable` when the check could not run.
    static func itemFailure(_ failure: VerificationFailure, field: String, retryAfter: Int) -> ServerAPIFailure {
        switch failure {
        case .invalid(let check, let detail): .invalid(check: check, appleErrorCode: nil, reason: "\(field): \(detail)")
        case .retryable(let detail): .unavailable(retryAfter: retryAfter, appleErrorCode: nil, reason: "\(field): \(detail)")
        }
    }

    static func environmentMismatch(_ field: String, _ found: AppStoreEnvironment, _ expected: AppStoreEnvironment) -> ServerAPIFailure {
        .invalid(check: .environment, appleErrorCode: nil, reason: "\(field): a \(found) item in an answer from \(expected)")
    }

    /// A 2xx answer whose body is not the endpoint's JSON.
    static func unreadable(_ endpoint: String, _ environment: AppStoreEnvironment, defaultRetryAfter: Int) -> ServerAPIFailure {
        .unavailable(retryAfter: defaultRetryAfter, appleErrorCode: nil, reason: "\(endpoint) (\(environment)): the answer is not the endpoint's JSON")
    }
}
