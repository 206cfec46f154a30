import DepotWire
import Foundation
import HTTP

/// Who may use `/admin/`: a script with the admin token (`Authorization: Bearer`), or the console's signed-in
/// page with its session cookie, which for a state-changing method must also send the session's CSRF token
/// (`X-CSRF-Token`) from the same origin. The page, its modules and the session endpoint itself are open (the
/// session endpoint does its own checks). Runs before any admin route is looked up.
struct ConsoleAccess: Sendable {
    let admin: AdminService
    let sessions: ConsoleSessions

    /// The refusal of a request under `/admin/`, or nil to let it through.
    func check(_ head: RequestHead) -> (any AnswerableError)? {
        if Self.isOpen(head) { return nil }
        // A bearer token is never sent by a browser on its own: it needs no CSRF token.
        if head.fields.contains("authorization") { return admin.checkToken(head) }
        guard let value = ConsoleSessions.cookieValue(in: head.fields.values("cookie")), let session = sessions.verify(cookie: value) else {
            return AdminFailure.unauthorized
        }
        return refusal(head, session: session)
    }

    /// Why a request carrying a valid session is refused: a page of another origin, or a state-changing method
    /// without the session's CSRF token.
    func refusal(_ head: RequestHead, session: ConsoleSessions.Session) -> ConsoleFailure? {
        let safe = head.method == .get || head.method == .head
        guard Self.isSameOrigin(head, safe: safe) else { return .crossOrigin }
        if safe { return nil }
        let tokens = head.fields.values("x-csrf-token")
        guard tokens.count == 1, sessions.isValidCSRF(tokens[0].trimmingCharacters(in: .whitespaces), for: session) else {
            return .csrfTokenInvalid
        }
        return nil
    }

    /// The console's own paths, reachable without credentials: `/admin`, `/admin/`, `/admin/console/<module>`
    /// (GET, HEAD) and `/admin/session` (any method: it checks what it needs).
    static func isOpen(_ head: RequestHead) -> Bool {
        guard let segments = try? RequestTarget(head.target).pathSegments(), segments.first == "admin" else { return false }
        if segments == ["admin", "session"] { return true }
        guard head.method == .get || head.method == .head else { return false }
        return segments == ["admin"] || segments == ["admin", ""] || (segments.count == 3 && segments[1] == "console")
    }

    /// Whether the browser says the request comes from a page of the server's own origin. `Sec-Fetch-Site` is
    /// believed when present (`same-origin`; a navigation typed by the user, `none`, only for safe methods);
    /// otherwise `Origin`, when present, must name the host the request was sent to (`Host`; the scheme is not
    /// compared, since a TLS-terminating proxy changes it). A request with neither comes from no browser page
    /// (a script, or a browser too old to say): the CSRF token still guards its state-changing requests.
    static func isSameOrigin(_ head: RequestHead, safe: Bool) -> Bool {
        if let site = head.fields.first("sec-fetch-site")?.trimmingCharacters(in: .whitespaces).lowercased() {
            return site == "same-origin" || (safe && site == "none")
        }
        guard let origin = head.fields.first("origin")?.trimmingCharacters(in: .whitespaces) else { return true }
        guard let host = head.fields.first("host"), let url = URLComponents(string: origin), let originHost = url.host,
              url.scheme == "http" || url.scheme == "https" else { return false }
        let bracketed = originHost.contains(":") ? "[\(originHost)]" : originHost
        let authority = url.port.map { "\(bracketed):\($0)" } ?? bracketed
        return authority.lowercased() == host.trimmingCharacters(in: .whitespaces).lowercased()
            || (url.port == nil && authority.lowercased() + ":" + (url.scheme == "https" ? "443" : "80") == host.lowercased())
    }
}
