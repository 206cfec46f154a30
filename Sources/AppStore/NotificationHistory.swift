public import DepotCore
public import Foundation

/// One attempt Apple made to deliver a notification.
public struct SendAttempt: Sendable, Equatable {
    /// When Apple tried.
    public var date: Date
    /// How it went.
    public var result: SendAttemptResult

    /// An attempt with the given parts.
    public init(date: Date, result: SendAttemptResult) {
        self.date = date
        self.result = result
    }
}

/// One notification of Get Notification History.
public struct NotificationHistoryItem: Sendable, Equatable {
    /// The `signedPayload` exactly as Apple sent it (to apply like a posted notification).
    public var signedPayload: String
    /// The payload verified like a posted V2 notification, or the check it failed: a failed one is
    /// reported, never applied.
    public var notification: Result<StoreKitNotification, VerificationFailure>
    /// Apple's delivery attempts.
    public var sendAttempts: [SendAttempt]

    /// An item with the given parts.
    public init(signedPayload: String, notification: Result<StoreKitNotification, VerificationFailure>, sendAttempts: [SendAttempt]) {
        self.signedPayload = signedPayload
        self.notification = notification
        self.sendAttempts = sendAttempts
    }
}

/// One page of Get Notification History.
public struct NotificationHistoryPage: Sendable, Equatable {
    /// The environment asked.
    public var environment: AppStoreEnvironment
    /// 1 for the first page.
    public var number: Int
    /// The page's notifications.
    public var items: [NotificationHistoryItem]
}

/// Every page of Get Notification History for one window.
public struct NotificationHistory: Sendable, Equatable {
    /// The environment asked.
    public var environment: AppStoreEnvironment
    /// Every notification, in Apple's order.
    public var items: [NotificationHistoryItem]
    /// Pages read.
    public var pages: Int
    /// False when the page limit was reached while Apple still had more.
    public var isComplete: Bool

    /// The notifications that verified.
    public var verified: [StoreKitNotification] { items.compactMap { try? $0.notification.get() } }
    /// The notifications that failed a check, with the failure.
    public var failed: [(signedPayload: String, failure: VerificationFailure)] {
        items.compactMap { item in
            if case .failure(let failure) = item.notification { return (item.signedPayload, failure) }
            return nil
        }
    }
}

/// The state of a test notification (Get Test Notification Status).
public struct TestNotificationStatus: Sendable, Equatable {
    /// The `TEST` notification, verified.
    public var notification: StoreKitNotification
    /// Apple's attempts to deliver it.
    public var sendAttempts: [SendAttempt]

    /// True once an attempt succeeded (the server answered 2xx).
    public var delivered: Bool { sendAttempts.contains { $0.result == .success } }
}
