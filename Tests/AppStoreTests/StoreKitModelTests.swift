import DepotCore
import Foundation
import Testing

/// Payload models decode Apple's JSON, keep unknown wire values, and read fractional milliseconds.
struct StoreKitModelTests {
    /// The payload of apple-library `xcode/xcode-signed-transaction` (fractional milliseconds).
    static let xcodeTransaction = """
        {"inAppOwnershipType":"PURCHASED","purchaseDate":1697679936049.7297,"subscriptionGroupIdentifier":"6F3A93AB",\
        "signedDate":1697679936056.485,"originalPurchaseDate":1697679936049.7297,"isUpgraded":false,\
        "offerType":1,"quantity":1,"transactionId":"0","type":"Auto-Renewable Subscription",\
        "transactionReason":"PURCHASE","productId":"pass.premium","expiresDate":1700358336049.7297,\
        "environment":"Xcode","storefrontId":"143441","originalTransactionId":"0",\
        "bundleId":"com.example.naturelab.backyardbirds.example","webOrderLineItemId":"0","storefront":"USA"}
        """

    @Test func decodesFractionalMilliseconds() throws {
        let transaction = try JSONDecoder().decode(StoreKitTransaction.self, from: Data(Self.xcodeTransaction.utf8))
        #expect(transaction.signedDate.appStoreMilliseconds == 1_697_679_936_056.485)
        #expect(abs(transaction.purchaseDate.timeIntervalSince1970 - 1_697_679_936.0497297) < 1e-6)
        #expect(transaction.expiresDate != nil)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.environment == .xcode)
        #expect(transaction.isUpgraded == false)
        #expect(transaction.offerType == 1)
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.webOrderLineItemId == "0")
    }

    @Test func unknownWireValuesDecodeAndKeepTheirText() throws {
        var object = try JSONSerialization.jsonObject(with: Data(Self.xcodeTransaction.utf8)) as! [String: Any]
        object["environment"] = "Staging"
        object["type"] = "Subscription Bundle"
        object["inAppOwnershipType"] = "GIFTED"
        object["revocationReason"] = 7
        object["revocationDate"] = 1_700_000_000_000
        let transaction = try JSONDecoder().decode(StoreKitTransaction.self,
                                                   from: JSONSerialization.data(withJSONObject: object))
        #expect(transaction.environment.rawValue == "Staging")
        #expect(transaction.environment != .production && transaction.environment != .sandbox)
        #expect(transaction.type.rawValue == "Subscription Bundle")
        #expect(transaction.inAppOwnershipType.description == "GIFTED")
        #expect(transaction.revocationReason?.rawValue == 7)
        #expect(transaction.revocationDate == Date(appStoreMilliseconds: 1_700_000_000_000))
    }

    @Test func identifiersMayArriveAsNumbers() throws {
        var object = try JSONSerialization.jsonObject(with: Data(Self.xcodeTransaction.utf8)) as! [String: Any]
        object["transactionId"] = 2_000_000_847_061_981
        object["originalTransactionId"] = 2_000_000_847_061_980
        object["webOrderLineItemId"] = NSNull()
        let transaction = try JSONDecoder().decode(StoreKitTransaction.self,
                                                   from: JSONSerialization.data(withJSONObject: object))
        #expect(transaction.transactionId == "2000000847061981")
        #expect(transaction.originalTransactionId == "2000000847061980")
        #expect(transaction.webOrderLineItemId == nil)
    }

    @Test(arguments: ["transactionId", "bundleId", "productId", "purchaseDate", "signedDate", "environment", "type"])
    func requiredTransactionFieldsAreRequired(key: String) throws {
        var object = try JSONSerialization.jsonObject(with: Data(Self.xcodeTransaction.utf8)) as! [String: Any]
        object[key] = nil
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(StoreKitTransaction.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }

    @Test func decodesAppleModelNotification() throws {
        // apple-library models/signedNotification.json (shape), trimmed.
        let json = """
            {"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"002e14d5-51f5-4503-b5a8-c3a1af68eb20",\
            "data":{"environment":"LocalTesting","appAppleId":41234,"bundleId":"com.example","bundleVersion":"1.2.3",\
            "signedTransactionInfo":"signed_transaction_info_value","signedRenewalInfo":"signed_renewal_info_value","status":1},\
            "version":"2.0","signedDate":1698148900000}
            """
        let notification = try JSONDecoder().decode(StoreKitNotification.self, from: Data(json.utf8))
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.data?.environment == .localTesting)
        #expect(notification.data?.appAppleId == 41234)
        #expect(notification.data?.status == 1)
        #expect(notification.data?.signedTransactionInfo == "signed_transaction_info_value")
        #expect(notification.data?.transactionInfo == nil)  // only the verifier fills it
    }

    @Test func decodesRenewalInfoWithOnlyTheRequiredFields() throws {
        let info = try JSONDecoder().decode(StoreKitRenewalInfo.self,
                                            from: Data(#"{"environment":"Sandbox","signedDate":1672956154000}"#.utf8))
        #expect(info.environment == .sandbox)
        #expect(info.productId == nil)
    }
}
