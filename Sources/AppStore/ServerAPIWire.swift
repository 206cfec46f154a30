import DepotCore
import Foundation

/// The JSON bodies of App Store Server API answers, as decoded before their signed items are
/// verified. Unknown keys are ignored; the signed items stay strings here.
enum ServerAPIWire {
    /// `ErrorPayload`: `{"errorCode": 4040010, "errorMessage": "Transaction id not found."}`.
    struct ErrorPayload: Decodable {
        var errorCode: Int?
        var errorMessage: String?
    }

    /// `HistoryResponse` of Get Transaction History v2.
    struct History: Decodable {
        var revision: String?
        var hasMore: Bool?
        var bundleId: String?
        var appAppleId: Int64?
        var environment: String?
        var signedTransactions: [String]?
    }

    /// `TransactionInfoResponse` of Get Transaction Info.
    struct TransactionInfo: Decodable {
        var signedTransactionInfo: String?
    }

    /// `StatusResponse` of Get All Subscription Statuses.
    struct Statuses: Decodable {
        struct Group: Decodable {
            var subscriptionGroupIdentifier: String?
            var lastTransactions: [LastTransaction]?
        }

        struct LastTransaction: Decodable {
            var status: Int?
            var originalTransactionId: String?
            var signedTransactionInfo: String?
            var signedRenewalInfo: String?
        }

        var environment: String?
        var bundleId: String?
        var appAppleId: Int64?
        var data: [Group]?
    }

    /// `NotificationHistoryResponse` of Get Notification History.
    struct NotificationHistory: Decodable {
        struct Item: Decodable {
            var signedPayload: String?
            var sendAttempts: [SendAttempt]?
        }

        var notificationHistory: [Item]?
        var hasMore: Bool?
        var paginationToken: String?
    }

    /// `SendAttemptItem`.
    struct SendAttempt: Decodable {
        var attemptDate: Double?
        var sendAttemptResult: String?
    }

    /// `SendTestNotificationResponse`.
    struct TestNotification: Decodable {
        var testNotificationToken: String?
    }

    /// `CheckTestNotificationResponse`.
    struct TestNotificationStatus: Decodable {
        var signedPayload: String?
        var sendAttempts: [SendAttempt]?
    }

    /// Decodes `body` as `type`; nil when it is not that JSON.
    static func decode<Body: Decodable>(_ type: Body.Type, from body: Data) -> Body? {
        try? JSONDecoder().decode(type, from: body)
    }
}
