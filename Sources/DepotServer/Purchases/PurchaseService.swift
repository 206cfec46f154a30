import AppStore
import DepotCore
import DepotCrypto
import Foundation
import HTTP
import Ledger
import Server

/// `POST /v1/receipts` and `POST /v1/notifications/appstore` (spec §4.2, §4.5).
///
/// Bodies are collected on the event loop (with their limits), then everything slow — Apple, signature
/// checks, the ledger — runs in a task and the answer is posted back to the loop.
final class PurchaseService: PurchaseRoutes {
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

    func receipts(_ head: RequestHead) -> Handling {
        guard Self.isJSON(head) else { return Self.unsupportedMediaType(route: "receipts") }
        return .collectBody(limit: Self.bodyLimit) { [self] body in
            .later { [self] in
                do throws(APIError) {
                    return try await unlock(body).response
                } catch {
                    return error.response(route: "receipts")
                }
            }
        }
    }

    func notifications(_ head: RequestHead) -> Handling {
        guard Self.isJSON(head) else { return Self.unsupportedMediaType(route: "notifications") }
        return .collectBody(limit: Self.bodyLimit) { [self] body in
            .later { [self] in
                do throws(APIError) {
                    try await receiveNotification(body)
                    return Response(status: 200, headers: HTTPFields(), body: .bytes([]), route: "notifications")
                } catch {
                    return error.response(route: "notifications")
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

    static func unsupportedMediaType(route: String) -> Handling {
        .reply(.response(APIError(415, "unsupported_media_type", "The body must be application/json in UTF-8.").response(route: route)))
    }

    // MARK: - Receipts

    struct UnlockResult {
        let response: Response
    }

    func unlock(_ body: [UInt8]) async throws(APIError) -> UnlockResult {
        let request = try PurchaseBody.parse(body)
        let facts: [PurchaseFact]
        let environment: String
        var subscriptionExpired = false
        switch request.proof {
        case .receipt(let receipt):
            switch await receipts.verify(receiptData: receipt, now: now()) {
            case .invalid(let status, let reason):
                throw Self.receiptInvalid(reason, appleStatus: status)
            case .unavailable(let status, let reason):
                logger.warning("verifyReceipt unavailable: \(reason)")
                var error = APIError(503, "apple_unavailable", "Apple cannot validate receipts right now; keep the transaction unfinished and try again.")
                if let status { error.extra.append(("appleStatus", "\(status)")) }
                error.headers.append("Retry-After", "5")
                throw error
            case .misconfigured(let status, let reason):
                logger.error("verifyReceipt misconfigured: \(reason) (check --apple-shared-secret and the endpoint URLs)")
                var error = APIError(502, "apple_misconfigured", "The server's App Store configuration was refused by Apple.")
                if let status { error.extra.append(("appleStatus", "\(status)")) }
                throw error
            case .valid(let response, let where_):
                guard response.hasReceipt, response.bundleID == bundleID else {
                    throw Self.receiptInvalid("the receipt is for bundle \(response.bundleID ?? "?"), not \(bundleID)", appleStatus: nil)
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
                    var error = Self.receiptInvalid("transactions[\(index)]: \(detail)", appleStatus: nil)
                    error.extra.append(("check", JSONText.string(check.rawValue)))
                    throw error
                case .failure(.retryable(let detail)):
                    logger.warning("JWS verification could not run: \(detail)")
                    var error = APIError(503, "apple_unavailable", "Signed transactions cannot be verified right now; try again.")
                    error.headers.append("Retry-After", "5")
                    throw error
                }
            }
            facts = verified
            environment = verified.first?.environment ?? "Production"
        }
        return UnlockResult(response: try await grant(facts, account: request.account, environment: environment,
                                                      subscriptionExpired: subscriptionExpired))
    }

    static func receiptInvalid(_ reason: String, appleStatus: Int?) -> APIError {
        var error = APIError(422, "receipt_invalid", "The purchase could not be validated: \(reason).")
        if let appleStatus { error.extra.append(("appleStatus", "\(appleStatus)")) }
        return error
    }

    /// Records the purchases, binds them to the account, and turns each into an entitlement or a rejection.
    func grant(_ facts: [PurchaseFact], account: String?, environment: String, subscriptionExpired: Bool) async throws(APIError) -> Response {
        guard let snapshot = store.current else {
            var error = APIError(503, "catalog_unavailable", "The catalog has not loaded.")
            error.headers.append("Retry-After", "5")
            throw error
        }
        let time = now()
        let decisions: [String: BindingDecision]
        do {
            decisions = try await ledger.record(facts.map(Self.ledgerPurchase), account: account, policy: policy, now: time)
        } catch {
            logger.error("ledger write failed: \(error)")
            var failure = APIError(503, "ledger_unavailable", "The purchase could not be recorded; try again.")
            failure.headers.append("Retry-After", "5")
            throw failure
        }
        var entitlements: [String] = []
        var rejected: [String] = []
        for fact in PurchaseFact.latestPerOriginal(facts) {
            func reject(_ reason: String) {
                rejected.append("{\"productId\": \(JSONText.string(fact.productID)), \"transactionId\": \(JSONText.string(fact.transactionID)), \"reason\": \"\(reason)\"}")
            }
            guard let product = snapshot.catalog.product(id: fact.productID) else { reject("unknown_product"); continue }
            guard let pack = product.pack else { reject("no_pack"); continue }
            if fact.revocationDate != nil { reject("revoked"); continue }
            if decisions[fact.originalTransactionID] == .boundToOtherAccount { reject("bound_to_other_account"); continue }
            switch ledger.access(originalTransactionID: fact.originalTransactionID, account: account) {
            case .revoked: reject("revoked"); continue
            case .transferred: reject("bound_to_other_account"); continue
            case .allowed: break
            }
            if subscriptionExpired || (fact.expiresDate.map { $0 <= time } ?? false) { reject("expired"); continue }
            // An auto-renewable subscription grants only while it runs: without an expiry date nothing shows it does.
            if product.type == .autoRenewable && fact.expiresDate == nil { reject("expired"); continue }
            let expires = Int64(time.timeIntervalSince1970) + Int64(tokenTTL)
            let token = tokens.issue(DownloadTokenClaims(pack: pack, originalTransactionID: fact.originalTransactionID,
                                                         account: account, expires: expires))
            var entry = "{\"productId\": \(JSONText.string(fact.productID)), \"pack\": \(JSONText.string(pack)), "
            entry += "\"transactionId\": \(JSONText.string(fact.transactionID)), \"originalTransactionId\": \(JSONText.string(fact.originalTransactionID)), "
            entry += "\"purchaseDate\": \(JSONText.string(Timestamp.rfc3339(Int64(fact.purchaseDate.timeIntervalSince1970)))), "
            entry += "\"expiresDate\": \(JSONText.optionalString(fact.expiresDate.map { Timestamp.rfc3339(Int64($0.timeIntervalSince1970)) })), "
            entry += "\"token\": \(JSONText.string(token)), \"tokenExpires\": \(JSONText.string(Timestamp.rfc3339(expires))), "
            entry += "\"manifest\": \(JSONText.string("/v1/packs/\(pack)/manifest"))}"
            entitlements.append(entry)
        }
        var body = "{\"environment\": \(JSONText.string(environment)),\n \"entitlements\": ["
        body += entitlements.joined(separator: ",\n  ")
        body += "],\n \"rejected\": [" + rejected.joined(separator: ",\n  ") + "]}\n"
        return JSONResponse.make(body, route: "receipts")
    }

    static func ledgerPurchase(_ fact: PurchaseFact) -> LedgerPurchase {
        LedgerPurchase(transactionID: fact.transactionID, originalTransactionID: fact.originalTransactionID, productID: fact.productID,
                       environment: fact.environment, purchaseDate: fact.purchaseDate, expiresDate: fact.expiresDate,
                       revocationDate: fact.revocationDate, source: fact.source)
    }

    // MARK: - Notifications

    func receiveNotification(_ body: [UInt8]) async throws(APIError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw APIError(400, "bad_request", "The body is not a JSON object.")
        }
        if let signed = object["signedPayload"] {
            guard let payload = signed as? String else { throw APIError(400, "bad_request", "`signedPayload` must be a string.") }
            try await receiveV2(payload)
        } else if object["notification_type"] != nil {
            try await receiveV1(object)
        } else {
            throw APIError(400, "bad_request", "Not an App Store Server Notification (no `signedPayload` or `notification_type`).")
        }
    }

    private func receiveV2(_ payload: String) async throws(APIError) {
        let notification: StoreKitNotification
        switch signedData.verifyNotification(payload, now: now()) {
        case .success(let verified):
            notification = verified
        case .failure(.invalid(.format, let detail)):
            throw APIError(400, "bad_request", "The signed payload is not a JWS notification: \(detail)")
        case .failure(.invalid(.bundle, let detail)):
            throw APIError(400, "wrong_bundle", "The notification is for another app: \(detail)")
        case .failure(.invalid(.environment, let detail)):
            // Verified, but from an environment this server does not serve (sandbox when sandbox is off).
            logger.info("notification ignored: \(detail)")
            return
        case .failure(.invalid(let check, let detail)):
            var error = APIError(401, "invalid_signature", "The notification's signature does not verify: \(detail)")
            error.extra.append(("check", JSONText.string(check.rawValue)))
            throw error
        case .failure(.retryable(let detail)):
            var error = APIError(503, "unavailable", "The notification cannot be verified right now: \(detail)")
            error.headers.append("Retry-After", "5")
            throw error
        }
        let type = notification.notificationType.rawValue
        var revoke: [LedgerRevocation] = []
        var restore: [String] = []
        if let transaction = notification.data?.transactionInfo {
            switch type {
            case "REFUND", "REVOKE":
                revoke.append(LedgerRevocation(transactionID: transaction.transactionId,
                                               originalTransactionID: transaction.originalTransactionId,
                                               revokedAt: transaction.revocationDate ?? notification.signedDate, reason: type))
            case "REFUND_REVERSED":
                restore.append(transaction.transactionId)
            default:
                break
            }
        }
        try await apply(id: "v2:" + notification.notificationUUID, type: type, revoke: revoke, restore: restore)
    }

    private func receiveV1(_ object: [String: Any]) async throws(APIError) {
        guard let type = object["notification_type"] as? String else {
            throw APIError(400, "bad_request", "`notification_type` must be a string.")
        }
        let password = (object["password"] as? String) ?? ""
        guard let sharedSecret, ConstantTime.equals(Array(password.utf8), Array(sharedSecret.utf8)) else {
            throw APIError(401, "invalid_password", "The notification's password does not match the shared secret.")
        }
        if let bid = object["bid"] as? String, bid != bundleID {
            throw APIError(400, "wrong_bundle", "The notification is for \(bid), not \(bundleID).")
        }
        var revoke: [LedgerRevocation] = []
        var cancelled: [String] = []
        if type == "REFUND" || type == "REVOKE", let value = object["unified_receipt"], !(value is NSNull) {
            guard let unified = value as? [String: Any] else { throw APIError(400, "bad_request", "`unified_receipt` must be an object.") }
            var receipt = unified
            if receipt["status"] == nil { receipt["status"] = 0 }
            guard let data = try? JSONSerialization.data(withJSONObject: receipt),
                  let parsed = try? VerifyReceiptResponse(json: data) else {
                throw APIError(400, "bad_request", "`unified_receipt` cannot be read.")
            }
            for purchase in parsed.purchases {
                guard let cancellation = purchase.cancellationDate else { continue }
                revoke.append(LedgerRevocation(transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
                                               revokedAt: cancellation, reason: type))
                cancelled.append("\(purchase.transactionID)@\(Int64(cancellation.timeIntervalSince1970 * 1000))")
            }
        }
        // V1 has no notification ID: type + transactions + dates identify it (spec §4.5).
        let original = (object["original_transaction_id"] as? String) ?? (object["original_transaction_id"] as? NSNumber)?.stringValue ?? ""
        let id = "v1:\(type):\(original):" + cancelled.sorted().joined(separator: ",")
        try await apply(id: id, type: type, revoke: revoke, restore: [])
    }

    private func apply(id: String, type: String, revoke: [LedgerRevocation], restore: [String]) async throws(APIError) {
        do {
            let applied = try await ledger.apply(notificationID: id, type: type, revoke: revoke, restore: restore, now: now())
            if applied, !revoke.isEmpty || !restore.isEmpty {
                logger.info("notification \(type): revoked \(revoke.count), restored \(restore.count)")
            }
        } catch {
            logger.error("ledger write failed for a notification: \(error)")
            var failure = APIError(503, "ledger_unavailable", "The notification could not be recorded; Apple will retry.")
            failure.headers.append("Retry-After", "5")
            throw failure
        }
    }
}
