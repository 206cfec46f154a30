/// Maps one App Store Server API answer to what the client does next (spec §2).
///
/// | answer | outcome |
/// |---|---|
/// | 2xx | `success` |
/// | 404 with `4040010` (transaction ID not found) | `transactionNotFound`: ask sandbox, when allowed |
/// | 5xx, 429, error codes 4040002, 4040004, 4040006, 5000001 | `retryable` (one retry after a backoff under 1 s, see `retryPause`) |
/// | 401, 403 | `misconfigured` (key, key ID, issuer or bundle refused) |
/// | any other 4xx with an Apple `errorCode` | `invalid` (the request's data is wrong: an unknown or malformed ID…) |
/// | any other status, or a 4xx without an Apple error body | `misconfigured` (not Apple's API at that URL) |
package enum ServerAPIStatusPolicy {
    /// What to do with one answer.
    package enum Outcome: Equatable {
        case success
        case transactionNotFound
        case retryable
        case misconfigured
        case invalid
    }

    /// Error codes Apple marks as retryable: account, app and original transaction not found
    /// (yet), and a general internal error.
    static let retryableErrorCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
    /// Transaction ID not found.
    static let transactionNotFoundCode = 4_040_010

    package static func classify(httpStatus: Int, errorCode: Int?) -> Outcome {
        if let errorCode, retryableErrorCodes.contains(errorCode) { return .retryable }
        switch httpStatus {
        case 200..<300: return .success
        case 401, 403: return .misconfigured
        case 404 where errorCode == transactionNotFoundCode: return .transactionNotFound
        case 429, 500..<600: return .retryable
        case 400..<500: return errorCode == nil ? .misconfigured : .invalid
        default: return .misconfigured
        }
    }

    /// The pause in seconds before the one retry of a retryable failure, or nil when it is not retried.
    /// Only a `429` is held to its `Retry-After` (`retryAfter`, in seconds): one that asks for `longest`
    /// seconds or more cannot be honoured within the backoff under a second and is handed on; a shorter one
    /// is waited for. Anything else (a 5xx, a retryable error code on another status, no answer:
    /// `httpStatus` nil) waits `backoff` whatever its `Retry-After`, which is only handed on to the client.
    package static func retryPause(httpStatus: Int?, retryAfter: Double?, backoff: Double, longest: Double) -> Double? {
        guard httpStatus == 429, let retryAfter else { return backoff }
        return retryAfter < longest ? max(retryAfter, backoff) : nil
    }
}
