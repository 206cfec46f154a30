/// Why a `verifyReceipt` response body could not be read. Fields are named by their JSON path, e.g.
/// `latest_receipt_info[3].expires_date_ms` or `receipt.bid`.
public enum ReceiptParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not JSON.
    case notJSON
    /// The JSON is not an object.
    case notAnObject
    /// A required field is absent (or `null`).
    case missingField(String)
    /// A field has a type or value that cannot be read as `expected`.
    case invalidField(String, expected: String)

    public var description: String {
        switch self {
        case .notJSON: "the verifyReceipt response is not JSON"
        case .notAnObject: "the verifyReceipt response is not a JSON object"
        case .missingField(let path): "the verifyReceipt response has no \(path)"
        case .invalidField(let path, let expected): "\(path) in the verifyReceipt response is not \(expected)"
        }
    }
}
