/// What to do with one `verifyReceipt` answer (see `AppleStatusPolicy`).
public enum AppleOutcome: Sendable, Equatable, CaseIterable {
    /// Status 0: the receipt is valid; evaluate its purchases.
    case ok
    /// Status 21006: the receipt is valid but its (iOS 6-style) subscription has expired. Apple still
    /// decodes the receipt, so it is evaluated like `ok` (bundle check, revocations), but every purchase in
    /// it that is not revoked comes out `expired`, whatever our clock says: a `200` with `rejected`
    /// reason `expired`, not an error.
    case okSubscriptionExpired
    /// Status 21007: a sandbox receipt sent to production. Send the same body to the sandbox endpoint when
    /// sandbox purchases are allowed; otherwise the receipt is invalid (`422`).
    case retryInSandbox
    /// Status 21008: a production receipt sent to sandbox. Send it to the production endpoint; if that is
    /// where it came from, the endpoints are misconfigured (`502`).
    case retryInProduction
    /// Status 21002: the receipt data was malformed, possibly a transient Apple error. Retry once; the
    /// same answer again makes the receipt invalid (`422`).
    case retryOnceThenInvalid
    /// The receipt is invalid: `422 receipt_invalid`, with `appleStatus`.
    case invalid
    /// Apple cannot answer now: `503 apple_unavailable` with `Retry-After`; the app keeps its StoreKit
    /// transaction unfinished and tries again.
    case unavailable
    /// Depot's configuration is wrong (shared secret mismatch, bad request to Apple): `502
    /// apple_misconfigured`, logged as an error.
    case misconfigured

    /// Whether the receipt was validated and its purchases may be evaluated.
    public var isValidReceipt: Bool { self == .ok || self == .okSubscriptionExpired }

    /// The HTTP status Depot answers with for a final outcome (spec §4.2); `nil` for the retry outcomes,
    /// which are not final (see `withoutRetry`).
    public var httpStatus: Int? {
        switch self {
        case .ok, .okSubscriptionExpired: 200
        case .invalid: 422
        case .unavailable: 503
        case .misconfigured: 502
        case .retryInSandbox, .retryInProduction, .retryOnceThenInvalid: nil
        }
    }

    /// The final outcome when the retry this outcome asks for cannot be made: sandbox not allowed, the
    /// other endpoint already tried, or the one retry already spent. Final outcomes return themselves.
    public var withoutRetry: AppleOutcome {
        switch self {
        case .retryInSandbox, .retryOnceThenInvalid: .invalid
        case .retryInProduction: .misconfigured
        default: self
        }
    }
}
