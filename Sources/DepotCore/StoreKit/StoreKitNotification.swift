public import Foundation

/// The payload of an App Store Server Notification V2 (`signedPayload`, a
/// `ResponseBodyV2DecodedPayload`).
public struct StoreKitNotification: Sendable, Equatable, Decodable {
    /// The notification's `data` object: which app and environment, and the nested signed payloads.
    public struct NotificationData: Sendable, Equatable, Decodable {
        /// The app's bundle identifier.
        public var bundleId: String
        /// The environment the notification is about.
        public var environment: AppStoreEnvironment
        /// The app's Apple ID (absent in Sandbox).
        public var appAppleId: Int64?
        /// The app's build version.
        public var bundleVersion: String?
        /// Subscription status (1 active, 2 expired, ...).
        public var status: Int?
        /// The nested transaction JWS, as received.
        public var signedTransactionInfo: String?
        /// The nested renewal info JWS, as received.
        public var signedRenewalInfo: String?
        /// The nested transaction once verified. Decoding leaves it nil; the signature verifier
        /// fills it after `signedTransactionInfo` passed the same checks as the notification.
        public var transactionInfo: StoreKitTransaction?
        /// The nested renewal info once verified (filled by the verifier, like `transactionInfo`).
        public var renewalInfo: StoreKitRenewalInfo?

        private enum CodingKeys: String, CodingKey {
            case bundleId, environment, appAppleId, bundleVersion, status, signedTransactionInfo, signedRenewalInfo
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            bundleId = try container.decode(String.self, forKey: .bundleId)
            environment = try container.decode(AppStoreEnvironment.self, forKey: .environment)
            appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
            bundleVersion = try container.decodeIfPresent(String.self, forKey: .bundleVersion)
            status = try container.decodeIfPresent(Int.self, forKey: .status)
            signedTransactionInfo = try container.decodeIfPresent(String.self, forKey: .signedTransactionInfo)
            signedRenewalInfo = try container.decodeIfPresent(String.self, forKey: .signedRenewalInfo)
        }
    }

    /// What happened (REFUND, REVOKE, TEST, ...).
    public var notificationType: NotificationType
    /// Details of `notificationType`, when Apple sends one.
    public var subtype: NotificationSubtype?
    /// Unique per notification; retries of the same notification repeat it.
    public var notificationUUID: String
    /// When the App Store signed the notification.
    public var signedDate: Date
    /// Notification format version ("2.0").
    public var version: String?
    /// The app data; absent for summary and external-purchase notifications.
    public var data: NotificationData?

    private enum CodingKeys: String, CodingKey {
        case notificationType, subtype, notificationUUID, signedDate, version, data
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationType = try container.decode(NotificationType.self, forKey: .notificationType)
        subtype = try container.decodeIfPresent(NotificationSubtype.self, forKey: .subtype)
        notificationUUID = try container.decode(String.self, forKey: .notificationUUID)
        signedDate = try container.decodeAppStoreDate(forKey: .signedDate)
        version = try container.decodeIfPresent(String.self, forKey: .version)
        data = try container.decodeIfPresent(NotificationData.self, forKey: .data)
    }
}
