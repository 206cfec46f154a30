/// How one attempt to deliver a notification to the server went (`sendAttemptResult` in Get
/// Notification History and Get Test Notification Status).
public struct SendAttemptResult: AppStoreWireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The server answered with a 2xx status.
    public static let success = SendAttemptResult(rawValue: "SUCCESS")
    /// The server did not answer in time.
    public static let timedOut = SendAttemptResult(rawValue: "TIMED_OUT")
    /// The TLS connection failed.
    public static let tlsIssue = SendAttemptResult(rawValue: "TLS_ISSUE")
    /// A redirect loop.
    public static let circularRedirect = SendAttemptResult(rawValue: "CIRCULAR_REDIRECT")
    /// No response at all.
    public static let noResponse = SendAttemptResult(rawValue: "NO_RESPONSE")
    /// The connection failed.
    public static let socketIssue = SendAttemptResult(rawValue: "SOCKET_ISSUE")
    /// The response used a charset Apple cannot read.
    public static let unsupportedCharset = SendAttemptResult(rawValue: "UNSUPPORTED_CHARSET")
    /// The response was not HTTP.
    public static let invalidResponse = SendAttemptResult(rawValue: "INVALID_RESPONSE")
    /// The connection closed before the answer.
    public static let prematureClose = SendAttemptResult(rawValue: "PREMATURE_CLOSE")
    /// The server answered with a status outside 2xx.
    public static let unsuccessfulHTTPResponseCode = SendAttemptResult(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    /// Anything else.
    public static let other = SendAttemptResult(rawValue: "OTHER")
}
