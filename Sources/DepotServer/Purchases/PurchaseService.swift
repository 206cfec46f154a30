import AppStore
import DepotCore
import DepotCrypto
import DepotWire
import Foundation
import HTTP
import Ledger
import Server

/// `POST /v1/receipts` and `POST /v1/notifications/appstore` (spec §4.2, §4.5).
///
/// Bodies are collected on the event loop (with their limits), then everything slow — Apple, signature
/// checks, the ledger — runs in a task and the answer is posted back to the loop. Legacy receipts go to
/// `verifyReceipt` or, with an In-App Purchase key, through the App Store Server API (`serverAPI`), which
/// also restores from one transaction and looks up expired subscriptions (spec app-store-server-api §3–§5).
final class PurchaseService: Sendable {
    let store: CatalogStore
    let ledger: Ledger
    let receipts: ReceiptVerifier
    let signedData: SignedDataVerifier
    let serverAPI: ServerAPIPurchases?
    let notificationReceiver: NotificationReceiver
    let tokens: DownloadTokenAuthority
    let tokenTTL: Int
    let policy: AccountPolicy
    let bundleID: String
    let logger: Logger
    let now: @Sendable () -> Date

    /// Largest request body (a receipt with hundreds of purchases is ~150 KB of base64).
    static let bodyLimit = 1 << 20

    init(store: CatalogStore, ledger: Ledger, receipts: ReceiptVerifier, signedData: SignedDataVerifier, serverAPI: ServerAPIPurchases?,
         tokens: DownloadTokenAuthority, tokenTTL: Int, policy: AccountPolicy, bundleID: String, sharedSecret: String?,
         consumption: ConsumptionAnswers? = nil, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.ledger = ledger
        self.receipts = receipts
        self.signedData = signedData
        self.serverAPI = serverAPI
        var receiver = NotificationReceiver(ledger: ledger, signedData: signedData, bundleID: bundleID, sharedSecret: sharedSecret,
                                            logger: logger, now: now)
        if let consumption {
            receiver.answersConsumptionRequests = true
            receiver.consumptionQueued = { consumption.wake() }
        }
        notificationReceiver = receiver
        self.tokens = tokens
        self.tokenTTL = tokenTTL
        self.policy = policy
        self.bundleID = bundleID
        self.logger = logger
        self.now = now
    }

    // MARK: - Routes

    /// `POST /v1/receipts`.
    /// `requestID` marks every line logged on the way (operations.md §2).
    func receipts(_ head: RequestHead, requestID: String? = nil) throws(PurchaseFailure) -> Handling {
        guard Self.isJSON(head) else { throw .unsupportedMediaType }
        let log = logger.with(requestID: requestID)
        return .collectBody(limit: Self.bodyLimit) { [self] body in
            .later { [self] in
                do throws(PurchaseFailure) {
                    return JSONAnswer.response(try await unlock(body, log: log), .receipts)
                } catch {
                    return error.answer.response(.receipts)
                }
            }
        }
    }

    /// `POST /v1/notifications/appstore`.
    func notifications(_ head: RequestHead, requestID: String? = nil) throws(PurchaseFailure) -> Handling {
        guard Self.isJSON(head) else { throw .unsupportedMediaType }
        let log = logger.with(requestID: requestID)
        return .collectBody(limit: Self.bodyLimit) { [self] body in
            .later { [self] in
                do throws(NotificationFailure) {
                    try await notificationReceiver.receive(body, log: log)
                    return Response(status: 200, headers: HTTPFields(), body: .bytes([]), route: RouteLabel.notifications.rawValue)
                } catch {
                    return error.answer.response(.notifications)
                }
            }
        }
    }

    /// `application/json`, with no charset or `charset=utf-8` (spec §4: JSON bodies are UTF-8).
    static func isJSON(_ head: RequestHead) -> Bool {
        guard let value = head.fields.first("content-type") else { return false }
        let parts = value.split(separator: ";")
        guard parts.first.map({ $0.trimmingOWS().lowercased() }) == "application/json" else { return false }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.first?.trimmingOWS().lowercased() == "charset" else { continue }
            guard pair.count == 2 else { return false }
            var charset = pair[1].trimmingOWS().lowercased()
            if charset.hasPrefix("\""), charset.hasSuffix("\""), charset.count >= 2 { charset = String(charset.dropFirst().dropLast()) }
            if charset != "utf-8" && charset != "utf8" { return false }
        }
        return true
    }

    // MARK: - Receipts

    /// Validates the body's receipt or transactions, records them, and answers with the entitlements.
    /// `log` is the request's logger (the service's own by default).
    func unlock(_ body: [UInt8], log: Logger? = nil) async throws(PurchaseFailure) -> PurchaseAnswer {
        let logger = log ?? self.logger
        let request = try PurchaseBody.parse(body)
        if request.history && serverAPI == nil { throw .historyUnavailable }
        let facts: [PurchaseFact]
        let environment: String
        var subscriptionExpired = false
        switch request.proof {
        case .receipt(let receipt):
            if let serverAPI, serverAPI.validatesReceipts {
                (facts, environment) = try await serverAPI.receiptPurchases(receipt, now: now(), log: logger)
            } else {
                (facts, environment, subscriptionExpired) = try await verifyReceipt(receipt, log: logger)
            }
        case .transactions(let list):
            let verified = try verifyTransactions(list, log: logger)
            if request.history, let serverAPI {
                (facts, environment) = try await serverAPI.restore(verified, now: now(), log: logger)
            } else {
                facts = try await serverAPI?.withLatestSubscriptionState(verified, now: now(), log: logger)
                    ?? verified.map(PurchaseFact.init(transaction:))
                environment = verified.first?.environment.rawValue ?? AppStoreEnvironment.production.rawValue
            }
        }
        return try await grant(facts, account: request.account, environment: environment, subscriptionExpired: subscriptionExpired,
                               log: logger)
    }

    /// A receipt through `verifyReceipt` (spec §4.2): its purchases, the environment that answered, and whether
    /// Apple said the subscription expired (status 21006).
    private func verifyReceipt(_ receipt: String, log logger: Logger) async throws(PurchaseFailure)
        -> (facts: [PurchaseFact], environment: String, expired: Bool) {
        switch await receipts.verify(receiptData: receipt, now: now()) {
        case .invalid(let status, let reason):
            throw .receiptInvalid(reason, appleStatus: status)
        case .unavailable(let status, let reason):
            logger.warning(.appleUnavailable, "verifyReceipt unavailable: \(reason)")
            throw .appleUnavailable(appleStatus: status)
        case .misconfigured(let status, let reason):
            logger.error(.appleMisconfigured, "verifyReceipt misconfigured: \(reason) (check --apple-shared-secret and the endpoint URLs)")
            throw .appleMisconfigured(appleStatus: status)
        case .valid(let response, let where_):
            guard response.hasReceipt, response.bundleID == bundleID else {
                throw .receiptInvalid("the receipt is for bundle \(response.bundleID ?? "?"), not \(bundleID)")
            }
            let environment = where_ == .sandbox ? "Sandbox" : "Production"
            return (response.purchases.map { PurchaseFact(receipt: $0, environment: environment) }, environment, response.status == 21006)
        }
    }

    /// Verifies every JWS the app sent (spec §4.2); the first failure answers for the request.
    private func verifyTransactions(_ list: [String], log logger: Logger) throws(PurchaseFailure) -> [StoreKitTransaction] {
        var verified: [StoreKitTransaction] = []
        for (index, jws) in list.enumerated() {
            switch signedData.verifyTransaction(jws, now: now()) {
            case .success(let transaction):
                verified.append(transaction)
            case .failure(.invalid(let check, let detail)):
                throw .receiptInvalid("transactions[\(index)]: \(detail)", check: check.rawValue)
            case .failure(.retryable(let detail)):
                logger.warning(.appleUnavailable, "JWS verification could not run: \(detail)")
                throw .verificationUnavailable
            }
        }
        return verified
    }

    /// Records the purchases, binds them to the account, and turns each into an entitlement or a rejection
    /// (``EntitlementRules``).
    func grant(_ facts: [PurchaseFact], account: String?, environment: String, subscriptionExpired: Bool,
               log: Logger? = nil) async throws(PurchaseFailure) -> PurchaseAnswer {
        let logger = log ?? self.logger
        guard let snapshot = store.current else { throw .catalogUnavailable }
        let time = now()
        let decisions: [String: BindingDecision]
        do {
            decisions = try await ledger.record(facts.map(Self.ledgerPurchase), account: account, policy: policy, now: time)
        } catch {
            logger.error(.ledgerFailed, "ledger write failed: \(error)")
            throw .ledgerUnavailable
        }
        let verdicts = EntitlementRules.judge(facts, catalog: snapshot.catalog, standing: { original in
            PurchaseStanding(refusedBinding: decisions[original] == .boundToOtherAccount,
                             access: Self.access(ledger.access(originalTransactionID: original, account: account)))
        }, subscriptionExpired: subscriptionExpired, now: time)
        var answer = PurchaseAnswer(environment: environment, entitlements: [], rejected: [])
        for verdict in verdicts {
            switch verdict {
            case .rejected(let fact, let reason):
                answer.rejected.append(RejectedPurchase(productId: fact.productID, transactionId: fact.transactionID, reason: reason))
            case .granted(let fact, let pack):
                let expires = Int64(time.timeIntervalSince1970) + Int64(tokenTTL)
                let token = tokens.issue(DownloadTokenClaims(pack: pack, originalTransactionID: fact.originalTransactionID,
                                                             account: account, expires: expires))
                answer.entitlements.append(Entitlement(
                    productId: fact.productID, pack: pack, transactionId: fact.transactionID, originalTransactionId: fact.originalTransactionID,
                    purchaseDate: fact.purchaseDate, expiresDate: fact.expiresDate, token: token,
                    tokenExpires: Date(timeIntervalSince1970: TimeInterval(expires)), manifest: WirePath.packManifest(pack: pack)))
            }
        }
        return answer
    }

    static func access(_ state: AccessState) -> PurchaseStanding.Access {
        switch state {
        case .allowed: .allowed
        case .revoked: .revoked
        case .transferred: .transferred
        }
    }

    static func ledgerPurchase(_ fact: PurchaseFact) -> LedgerPurchase {
        LedgerPurchase(transactionID: fact.transactionID, originalTransactionID: fact.originalTransactionID, productID: fact.productID,
                       environment: fact.environment, purchaseDate: fact.purchaseDate, expiresDate: fact.expiresDate,
                       revocationDate: fact.revocationDate, source: fact.source == .receipt ? .receipt : .jws)
    }
}
