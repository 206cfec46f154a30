/// Why an App Store Server API call gave no usable answer, typed the way the server maps it
/// (spec §2). Reasons are for logs: they never hold a JWT, key, receipt or token.
public enum ServerAPIFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// `422 receipt_invalid`. `check` is the failed check of a signed item (or `format` for a
    /// receipt that is not one, `app_id` for an answer for another app Apple ID); nil for a
    /// transaction neither environment knows. `appleErrorCode` when Apple gave one.
    case invalid(check: VerificationCheck?, appleErrorCode: Int?, reason: String)
    /// `503 apple_unavailable` with `Retry-After: retryAfter` (seconds): Apple could not answer
    /// (5xx, 429, a retryable error code, timeout, no connection) even after the one retry.
    case unavailable(retryAfter: Int, appleErrorCode: Int?, reason: String)
    /// `502 apple_misconfigured`, logged as an error: Apple refused the key, key ID, issuer or
    /// bundle (401, 403), or answered for another bundle, or the base URL is not Apple's API.
    case misconfigured(httpStatus: Int?, appleErrorCode: Int?, reason: String)

    /// The failed check, for an invalid item.
    public var check: VerificationCheck? {
        if case .invalid(let check, _, _) = self { return check }
        return nil
    }

    /// Apple's `errorCode`, when the failure came with one.
    public var appleErrorCode: Int? {
        switch self {
        case .invalid(_, let code, _), .unavailable(_, let code, _), .misconfigured(_, let code, _): code
        }
    }

    /// The reason, for logs.
    public var reason: String {
        switch self {
        case .invalid(_, _, let reason), .unavailable(_, _, let reason), .misconfigured(_, _, let reason): reason
        }
    }

    public var description: String {
        switch self {
        case .invalid(let check, _, let reason): "invalid\(check.map { " (\($0.rawValue))" } ?? ""): \(reason)"
        case .unavailable(let retryAfter, _, let reason): "unavailable (retry after \(retryAfter) s): \(reason)"
        case .misconfigured(_, _, let reason): "misconfigured: \(reason)"
        }
    }
}
