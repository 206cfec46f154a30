public import Foundation

/// A validated receipt's purchases judged against the configured bundle ID and a given "now".
///
/// Rules (spec §4.2): the bundle ID must match; a purchase with `cancellation_date_ms` is `revoked`; one
/// whose `expires_date` is not after `now` is `expired`; otherwise it is `active`. Under status 21006
/// (`AppleOutcome.okSubscriptionExpired`) every purchase that is not revoked is `expired`: Apple says the
/// subscription has expired, and its word beats our clock.
public struct ReceiptEvaluation: Sendable, Equatable {
    /// Apple's status (0 or 21006).
    public var status: Int
    /// Apple's `environment`, when given.
    public var environment: String?
    /// One verdict per distinct transaction, in `VerifyReceiptResponse.purchases` order.
    public var verdicts: [ReceiptVerdict]

    /// Evaluates `response` for the app `bundleID` at `now`.
    public init(response: VerifyReceiptResponse, bundleID: String, now: Date) throws(ReceiptEvaluationError) {
        let outcome = AppleStatusPolicy.classify(status: response.status, isRetryable: response.isRetryable)
        guard outcome.isValidReceipt else { throw .statusNotValid(response.status) }
        guard response.hasReceipt else { throw .missingReceipt }
        guard response.bundleID == bundleID else {
            throw .bundleMismatch(expected: bundleID, found: response.bundleID)
        }
        status = response.status
        environment = response.environment
        let subscriptionExpired = outcome == .okSubscriptionExpired
        verdicts = response.purchases.map { purchase in
            ReceiptVerdict(purchase: purchase, state: Self.state(of: purchase, now: now, subscriptionExpired: subscriptionExpired))
        }
    }

    /// The state of one purchase at `now`.
    public static func state(of purchase: ReceiptPurchase, now: Date, subscriptionExpired: Bool = false) -> ReceiptVerdict.State {
        if purchase.cancellationDate != nil { return .revoked }
        if subscriptionExpired { return .expired }
        if let expires = purchase.expiresDate { return expires > now ? .active : .expired }
        return .active
    }
}
