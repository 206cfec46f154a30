/// Why a signed App Store payload was not accepted.
public enum VerificationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data is not acceptable and never will be: answer `422` with `check` (or, for a V2
    /// notification, `401`; `.bundle` there means `400 wrong_bundle`). `detail` is for logs.
    case invalid(VerificationCheck, detail: String)
    /// The verifier could not run (a libcrypto resource failure): answer `503`, the client keeps
    /// its transaction and tries again.
    case retryable(detail: String)

    /// The failed check, nil for a retryable failure.
    public var check: VerificationCheck? {
        if case .invalid(let check, _) = self { return check }
        return nil
    }

    public var description: String {
        switch self {
        case .invalid(let check, let detail): "\(check.rawValue): \(detail)"
        case .retryable(let detail): "retryable: \(detail)"
        }
    }
}
