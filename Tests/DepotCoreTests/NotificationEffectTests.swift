import DepotCore
import Foundation
import Testing

/// spec §4.5: what a notification does to access, by its typed `NotificationType`.
@Suite struct NotificationEffectTests {
    static let signed = Date(timeIntervalSince1970: 1_900_000_000)

    static func notification(_ type: NotificationType, revokedAt: Date? = nil, withTransaction: Bool = true) throws -> StoreKitNotification {
        let json = """
        {"notificationType": "\(type.rawValue)", "notificationUUID": "u-1", "signedDate": \(signed.timeIntervalSince1970 * 1000),
         "data": {"bundleId": "com.example.depot", "environment": "Production"}}
        """
        var notification = try JSONDecoder().decode(StoreKitNotification.self, from: Data(json.utf8))
        if withTransaction {
            notification.data?.transactionInfo = StoreKitTransaction(
                transactionId: "t-2", originalTransactionId: "t-1", bundleId: "com.example.depot", productId: "level2",
                purchaseDate: signed.addingTimeInterval(-86_400), originalPurchaseDate: signed.addingTimeInterval(-86_400),
                type: .nonConsumable, environment: .production, signedDate: signed, revocationDate: revokedAt)
        }
        return notification
    }

    @Test(arguments: [NotificationType.refund, .revoke])
    func refundAndRevokeRevokeTheTransaction(_ type: NotificationType) throws {
        let revokedAt = Self.signed.addingTimeInterval(-30)
        #expect(NotificationEffect.of(try Self.notification(type, revokedAt: revokedAt)) == .revoke([
            NotificationEffect.Revocation(transactionID: "t-2", originalTransactionID: "t-1", revokedAt: revokedAt, reason: type.rawValue),
        ]))
        // Without a revocation date, the notification's own time.
        #expect(NotificationEffect.of(try Self.notification(type)).revocations.first?.revokedAt == Self.signed)
    }

    @Test func refundReversedRestores() throws {
        let effect = NotificationEffect.of(try Self.notification(.refundReversed))
        #expect(effect == .restore(["t-2"]))
        #expect(effect.restorations == ["t-2"])
        #expect(effect.revocations.isEmpty)
    }

    @Test(arguments: [NotificationType.refundDeclined, .consumptionRequest, .test, .didRenew, .expired, NotificationType(rawValue: "SOMETHING_NEW")])
    func otherTypesAreRecordedOnly(_ type: NotificationType) throws {
        #expect(NotificationEffect.of(try Self.notification(type)) == .recordOnly)
    }

    @Test func aRefundWithoutATransactionIsRecordedOnly() throws {
        #expect(NotificationEffect.of(try Self.notification(.refund, withTransaction: false)) == .recordOnly)
    }

    static func purchase(_ id: String, cancelled: Date?) -> ReceiptPurchase {
        ReceiptPurchase(productID: "level2", transactionID: id, originalTransactionID: "o-" + id,
                        purchaseDate: signed.addingTimeInterval(-86_400), cancellationDate: cancelled)
    }

    @Test func v1RefundRevokesTheCancelledPurchasesOnly() {
        let cancelled = Self.signed.addingTimeInterval(-5)
        let effect = NotificationEffect.ofV1(type: NotificationType(rawValue: "REFUND"),
                                             purchases: [Self.purchase("a", cancelled: cancelled), Self.purchase("b", cancelled: nil)])
        #expect(effect == .revoke([NotificationEffect.Revocation(transactionID: "a", originalTransactionID: "o-a", revokedAt: cancelled,
                                                                 reason: "REFUND")]))
    }

    @Test func v1NeverRestoresAndIgnoresOtherTypes() {
        let purchases = [Self.purchase("a", cancelled: Self.signed)]
        #expect(NotificationEffect.ofV1(type: .refundReversed, purchases: purchases) == .recordOnly)
        #expect(NotificationEffect.ofV1(type: NotificationType(rawValue: "DID_CHANGE_RENEWAL_STATUS"), purchases: purchases) == .recordOnly)
        #expect(NotificationEffect.ofV1(type: .revoke, purchases: [Self.purchase("b", cancelled: nil)]) == .recordOnly)
    }

    @Test func onlyRefundAndRevokeRevoke() {
        #expect(NotificationType.refund.revokesAccess && NotificationType.revoke.revokesAccess)
        #expect(!NotificationType.refundReversed.revokesAccess && NotificationType.refundReversed.restoresAccess)
        #expect(!NotificationType.refundDeclined.revokesAccess && !NotificationType.refundDeclined.restoresAccess)
    }
}
