/// Why a console request (sign-in, a session's request) was refused.
enum ConsoleFailure: Error, Sendable, Equatable {
    /// Too many wrong admin tokens from this address lately.
    case signInThrottled(retryAfter: Int)
    /// The admin token given at sign-in is wrong.
    case wrongAdminToken
    /// The sign-in body is not `{"token": "..."}`.
    case badSignInBody
    /// No valid session cookie.
    case notSignedIn
    /// A state-changing request with a session cookie but without its CSRF token.
    case csrfTokenInvalid
    /// A request with a session cookie sent by a page of another origin.
    case crossOrigin
    /// A console asset that does not exist.
    case noSuchAsset
}
