/// Why a chain did not validate, in OpenSSL's words (`X509_verify_cert_error_string`).
public struct ChainVerificationError: Error, Sendable, CustomStringConvertible {
    /// OpenSSL's `X509_V_ERR_*` code (-1 for a failure before verification started).
    public let code: Int
    /// Position in the chain of the certificate at fault (0 = leaf).
    public let depth: Int
    /// OpenSSL's reason, e.g. "certificate has expired".
    public let reason: String

    public var description: String { "\(reason) (depth \(depth))" }
}
