/// `200` to `POST /admin/session` (sign-in) and `GET /admin/session` (a page that was reloaded asks whether it is
/// signed in): the CSRF token the console sends as `X-CSRF-Token` with every state-changing request, and when
/// the session ends. The session itself travels only in its `HttpOnly` cookie. Not signed in: `signedIn` false,
/// no other field.
public struct ConsoleSessionAnswer: Sendable, Hashable, Codable {
    public var signedIn: Bool
    public var csrfToken: String?
    /// RFC 3339 UTC.
    public var expires: String?

    public init(signedIn: Bool, csrfToken: String? = nil, expires: String? = nil) {
        self.signedIn = signedIn
        self.csrfToken = csrfToken
        self.expires = expires
    }
}
