/// An answer the simulated App Store Server API gives instead of the real one, for the next calls.
public enum SimulatedFailure: Sendable, Equatable {
    /// `httpStatus` with Apple's error body `{"errorCode": …, "errorMessage": …}`, e.g. `500` with
    /// `5000001` (general internal, retryable) or `404` with `4040002` (account not found, retryable).
    case error(httpStatus: Int, errorCode: Int)
    /// `httpStatus` with an HTML body, as a proxy in front of Apple answers (e.g. `502`, `503`).
    case httpStatus(Int)
    /// `429` with `4290000` and `Retry-After: retryAfter` (seconds).
    case rateLimited(retryAfter: Int)
    /// The real answer, after `seconds` (longer than the client's timeout: a timeout).
    case delay(seconds: Double)
    /// `failure` (an `error` or `httpStatus`, e.g. a `503`) with `Retry-After: retryAfter` (seconds) added.
    indirect case withRetryAfter(Int, SimulatedFailure)

    /// `500` with `5000001`.
    public static let generalInternalRetryable = SimulatedFailure.error(httpStatus: 500, errorCode: 5_000_001)
}

/// The Server API endpoints the simulated App Store answers (names match the client's observer).
public enum SimulatedEndpoint: String, Sendable, CaseIterable {
    case transactionHistory = "transaction_history"
    case transactionInfo = "transaction_info"
    case subscriptionStatuses = "subscription_statuses"
    case notificationHistory = "notification_history"
    case testNotification = "test_notification"
    case testNotificationStatus = "test_notification_status"
    case consumption
}

/// A Send Consumption Information request the simulated store received.
public struct RecordedConsumption: Sendable, Equatable {
    /// The transaction it is about.
    public var transactionID: String
    /// The environment it was sent to.
    public var environment: SimulatedAppStore.Environment
    /// The body exactly as received.
    public var body: [UInt8]

    /// The body as JSON text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
