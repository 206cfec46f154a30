import AppStore
import DepotCore
import DepotCrypto
import Foundation
import Ledger

/// App Store Server Notifications (spec §4.5): a posted V1 or V2 body checked and applied to the ledger,
/// and a verified V2 notification applied the same way, whether it was posted or read back from Apple's
/// notification history by the catch-up (spec app-store-server-api §6). Idempotent by notification ID.
struct NotificationReceiver: Sendable {
    let ledger: Ledger
    let signedData: SignedDataVerifier
    let bundleID: String
    let sharedSecret: String?
    let logger: Logger
    let now: @Sendable () -> Date
    /// With `--consumption-info on`: a verified `CONSUMPTION_REQUEST` is queued for an answer in the ledger
    /// before it is acknowledged (spec app-store-server-api §7), then `consumptionQueued` is called (to wake
    /// the sender).
    var answersConsumptionRequests = false
    var consumptionQueued: (@Sendable () -> Void)? = nil

    /// What applying one notification did.
    struct Outcome: Sendable, Equatable {
        /// The ledger had not seen the notification before (by any instance).
        var isNew: Bool
        /// It revoked or restored access (only a new notification does).
        var changedAccess: Bool
    }

    /// Checks and applies a posted body (`{"signedPayload": …}` or a V1 notification); `log` is the request's
    /// logger (the receiver's own by default).
    func receive(_ body: [UInt8], log: Logger? = nil) async throws(NotificationFailure) {
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
        _ = try await apply(notification, log: logger)
    }

    /// Applies a verified V2 notification: its effect (``NotificationEffect``) once per `notificationUUID`.
    func apply(_ notification: StoreKitNotification, log: Logger? = nil) async throws(NotificationFailure) -> Outcome {
        if answersConsumptionRequests, notification.notificationType == .consumptionRequest {
            try await queueConsumptionAnswer(notification, logger: log ?? logger)
        }
        let effect = NotificationEffect.of(notification)
        let isNew = try await apply(effect, id: "v2:" + notification.notificationUUID, type: notification.notificationType.rawValue,
                                    logger: log ?? logger)
        return Outcome(isNew: isNew, changedAccess: isNew && effect != .recordOnly)
    }

    /// Queues the answer to a `CONSUMPTION_REQUEST` (once per notification: a redelivery queues nothing); a
    /// ledger that cannot take it fails the notification, so Apple sends it again.
    private func queueConsumptionAnswer(_ notification: StoreKitNotification, logger: Logger) async throws(NotificationFailure) {
        guard let transaction = notification.data?.transactionInfo else {
            logger.warning(.consumption, "CONSUMPTION_REQUEST \(notification.notificationUUID) names no transaction; not answered")
            return
        }
        let request = ConsumptionRequest(
            notificationUUID: notification.notificationUUID, transactionId: transaction.transactionId,
            originalTransactionId: transaction.originalTransactionId, productId: transaction.productId,
            environment: transaction.environment.rawValue,
            signedDate: Self.milliseconds(notification.signedDate))
        do {
            if try await ledger.queueConsumptionAnswer(request, now: now()) {
                logger.info(.consumption, "CONSUMPTION_REQUEST for \(transaction.transactionId) queued for an answer")
                consumptionQueued?()
            }
        } catch {
            logger.error(.ledgerFailed, "ledger write failed for a consumption answer: \(error)")
            throw .ledgerUnavailable
        }
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
        let cancelled = effect.revocations.map { "\($0.transactionID)@\(Self.milliseconds($0.revokedAt))" }
        let original = (object["original_transaction_id"] as? String) ?? (object["original_transaction_id"] as? NSNumber)?.stringValue ?? ""
        let id = "v1:\(typeText):\(original):" + cancelled.sorted().joined(separator: ",")
        _ = try await apply(effect, id: id, type: typeText, logger: logger)
    }

    /// Whole milliseconds since 1970 for an identifier; never traps (the parser already refuses absurd dates).
    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return value.isFinite && abs(value) < 9.2e18 ? Int64(value) : 0
    }

    /// Records the notification and its effect in one ledger transaction; false when it was processed before.
    private func apply(_ effect: NotificationEffect, id: String, type: String, logger: Logger) async throws(NotificationFailure) -> Bool {
        let revoke = effect.revocations.map {
            LedgerRevocation(transactionID: $0.transactionID, originalTransactionID: $0.originalTransactionID, revokedAt: $0.revokedAt,
                             reason: $0.reason)
        }
        let restore = effect.restorations
        do {
            return try await AccessChanges(ledger: ledger).apply(id: id, type: type, revoke: revoke, restore: restore, now: now(),
                                                                 origin: .notification, logger: logger)
        } catch {
            logger.error(.ledgerFailed, "ledger write failed for a notification: \(error)")
            throw .ledgerUnavailable
        }
    }
}
