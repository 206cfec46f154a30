/// Why a `verifyReceipt` response cannot be evaluated.
public enum ReceiptEvaluationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status does not say the receipt is valid (neither 0 nor 21006); classify it with
    /// `AppleStatusPolicy` instead.
    case statusNotValid(Int)
    /// The response has no `receipt` object.
    case missingReceipt
    /// `receipt.bundle_id` (or `bid`) is not the configured bundle ID (`nil`: absent): `422`.
    case bundleMismatch(expected: String, found: String?)

    public var description: String {
        switch self {
        case .statusNotValid(let status): "verifyReceipt status \(status) is not a valid receipt"
        case .missingReceipt: "the verifyReceipt response has no receipt"
        case .bundleMismatch(let expected, let found):
            "the receipt is for bundle \(found.map { "'\($0)'" } ?? "(none)"), not '\(expected)'"
        }
    }
}
