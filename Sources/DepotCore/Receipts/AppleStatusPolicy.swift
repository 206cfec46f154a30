/// Maps Apple's `verifyReceipt` answers to what Depot does next (spec §4.2, error table).
///
/// | Apple | outcome |
/// |---|---|
/// | 0 | `ok` |
/// | 21006 | `okSubscriptionExpired` (valid receipt, expired subscription) |
/// | 21007 / 21008 | `retryInSandbox` / `retryInProduction` |
/// | 21002 | `retryOnceThenInvalid` |
/// | 21003, 21010 | `invalid` (422) |
/// | 21005, 21009, 21100–21199 | `unavailable` (503), or `invalid` (422) when `is-retryable` is explicitly false/0 |
/// | 21000, 21004 | `misconfigured` (502) |
/// | any other status (unknown 21xxx included) | `invalid` (422): never grant on a code we do not know |
/// | HTTP 5xx, 408, 429, timeout, no connection, unreadable body | `unavailable` (503) |
/// | other non-2xx HTTP status | `misconfigured` (502): wrong endpoint URL or request |
public enum AppleStatusPolicy {
    /// Classifies a response whose JSON body gave `status` (and `is-retryable`, if present).
    /// `httpStatus` is the HTTP status of the response, when known; a failing HTTP status decides on its own.
    public static func classify(status: Int, isRetryable: Bool?, httpStatus: Int? = nil) -> AppleOutcome {
        if let httpStatus, !(200..<300).contains(httpStatus) {
            return classifyFailedResponse(httpStatus: httpStatus)
        }
        switch status {
        case 0: return .ok
        case 21006: return .okSubscriptionExpired
        case 21007: return .retryInSandbox
        case 21008: return .retryInProduction
        case 21002: return .retryOnceThenInvalid
        case 21003, 21010: return .invalid
        case 21005, 21009, 21100...21199: return isRetryable == false ? .invalid : .unavailable
        case 21000, 21004: return .misconfigured
        default: return .invalid
        }
    }

    /// Classifies a call that produced no usable status: `httpStatus` `nil` for a timeout or no connection,
    /// otherwise the HTTP status of a response whose body was not a readable `verifyReceipt` answer.
    public static func classifyFailedResponse(httpStatus: Int?) -> AppleOutcome {
        guard let httpStatus else { return .unavailable }
        switch httpStatus {
        case 200..<300, 408, 429, 500..<600: return .unavailable
        default: return .misconfigured
        }
    }
}
