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
/// checks, the ledger — runs in a task and the answer is posted back to the loop.
final class PurchaseService: Sendable {
    let store: CatalogStore
    let ledger: Ledger
    let receipts: ReceiptVerifier
    let signedData: SignedDataVerifier
    let tokens: DownloadTokenAuthority
    let tokenTTL: Int
    let policy: AccountPolicy
    let bundleID: String
    let sharedSecret: String?
    let logger: Logger
    let now: @Sendable () -> Date

    /// Largest request body (a receipt with hundreds of purchases is ~150 KB of base64).
    static let bodyLimit = 1 << 20

    init(store: CatalogStore, ledger: Ledger, receipts: ReceiptVerifier, signedData: SignedDataVerifier,
         tokens: DownloadTokenAuthority, tokenTTL: Int, policy: AccountPolicy, bundleID: String, sharedSecret: String?,
         logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.ledger = ledger
        self.receipts = receipts
        self.signedData = signedData
        self.tokens = tokens
        self.tokenTTL = tokenTTL
        self.policy = policy
        self.bundleID = bundleID
        self.sharedSecret = sharedSecret
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
                    try await receiveNotification(body, log: log)
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
        let facts: [PurchaseFact]
        let environment: String
        var subscriptionExpired = false
        switch request.proof {
        case .receipt(let receipt):
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
                subscriptionExpired = response.status == 21006
                environment = where_ == .sandbox ? "Sandbox" : "Production"
                facts = response.purchases.map { PurchaseFact(receipt: $0, environment: environment) }
            }
        case .transactions(let list):
            var verified: [PurchaseFact] = []
            for (index, jws) in list.enumerated() {
                switch signedData.verifyTransaction(jws, now: now()) {
                case .success(let transaction):
                    verified.append(PurchaseFact(transaction: transaction))
                case .failure(.invalid(let check, let detail)):
                    throw .receiptInvalid("transactions[\(index)]: \(detail)", check: check.rawValue)
                case .failure(.retryable(let detail)):
                    logger.warning(.appleUnavailable, "JWS verification could not run: \(detail)")
                    throw .verificationUnavailable
                }
            }
            facts = verified
            environment = verified.first?.environment ?? "Production"
        }
        return try await grant(facts, account: request.account, environment: environment, subscriptionExpired: subscriptionExpired,
                               log: logger)
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

    // MARK: - Notifications

    func receiveNotification(_ body: [UInt8], log: Logger? = nil) async throws(NotificationFailure) {
        let logger = log ?? self.logger
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw .badRequest("The body is not a JSON object.")
        }
        if let signed = object["signedPayload"] {
            guard let payload = signed as? String else { throw .badRequest("`signedPayload` must be a string.") }
            try await receiveV2(payload, logger: logger)
        } else if object["notification_type"] != nil {
            try await receiveV1(object, logger: logger)
        } else {
            throw .badRequest("Not an App Store Server Notification (no `signedPayload` or `notification_type`).")
        }
    }

    private func receiveV2(_ payload: String, logger: Logger) async throws(NotificationFailure) {
        let notification: StoreKitNotification
        switch signedData.verifyNotification(payload, now: now()) {
        case .success(let verified):
            notification = verified
        case .failure(.invalid(.format, let detail)):
            throw .badRequest("The signed payload is not a JWS notification: \(detail)")
        case .failure(.invalid(.bundle, let detail)):
            throw .wrongBundle("The notification is for another app: \(detail)")
        case .failure(.invalid(.environment, let detail)):
            // Verified, but from an environment this server does not serve (sandbox when sandbox is off).
            logger.info(.notification, "notification ignored: \(detail)")
            return
        case .failure(.invalid(let check, let detail)):
            throw .invalidSignature(detail, check: check.rawValue)
        case .failure(.retryable(let detail)):
            throw .verificationUnavailable(detail)
        }
        try await apply(NotificationEffect.of(notification), id: "v2:" + notification.notificationUUID,
                        type: notification.notificationType.rawValue, logger: logger)
    }

    private func receiveV1(_ object: [String: Any], logger: Logger) async throws(NotificationFailure) {
        guard let typeText = object["notification_type"] as? String else { throw .badRequest("`notification_type` must be a string.") }
        let type = NotificationType(rawValue: typeText)
        let password = (object["password"] as? String) ?? ""
        guard let sharedSecret, ConstantTime.equals(Array(password.utf8), Array(sharedSecret.utf8)) else { throw .invalidPassword }
        if let bid = object["bid"] as? String, bid != bundleID { throw .wrongBundle("The notification is for \(bid), not \(bundleID).") }
        var purchases: [ReceiptPurchase] = []
        if type.revokesAccess, let value = object["unified_receipt"], !(value is NSNull) {
            guard let unified = value as? [String: Any] else { throw .badRequest("`unified_receipt` must be an object.") }
            var receipt = unified
            if receipt["status"] == nil { receipt["status"] = 0 }
            guard let data = try? JSONSerialization.data(withJSONObject: receipt),
                  let parsed = try? VerifyReceiptResponse(json: data) else {
                throw .badRequest("`unified_receipt` cannot be read.")
            }
            purchases = parsed.purchases
        }
        let effect = NotificationEffect.ofV1(type: type, purchases: purchases)
        // V1 has no notification ID: type + transactions + dates identify it (spec §4.5).
        let cancelled = effect.revocations.map { "\($0.transactionID)@\(Int64($0.revokedAt.timeIntervalSince1970 * 1000))" }
        let original = (object["original_transaction_id"] as? String) ?? (object["original_transaction_id"] as? NSNumber)?.stringValue ?? ""
        let id = "v1:\(typeText):\(original):" + cancelled.sorted().joined(separator: ",")
        try await apply(effect, id: id, type: typeText, logger: logger)
    }

    private func apply(_ effect: NotificationEffect, id: String, type: String, logger: Logger) async throws(NotificationFailure) {
        let revoke = effect.revocations.map {
            LedgerRevocation(transactionID: $0.transactionID, originalTransactionID: $0.originalTransactionID, revokedAt: $0.revokedAt,
                             reason: $0.reason)
        }
        let restore = effect.restorations
        do {
            let applied = try await ledger.apply(notificationID: id, type: type, revoke: revoke, restore: restore, now: now())
            if applied, effect != .recordOnly {
                logger.info(.notification, "notification \(type): revoked \(revoke.count), restored \(restore.count)")
            }
        } catch {
            logger.error(.ledgerFailed, "ledger write failed for a notification: \(error)")
            throw .ledgerUnavailable
        }
    }
}
