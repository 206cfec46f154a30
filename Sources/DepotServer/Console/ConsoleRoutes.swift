import DepotConsole
import DepotCore
import DepotWire
import Foundation
import HTTP
import Server

/// The publisher console: the page and its modules (embedded in the binary), sign-in, the session's CSRF token
/// and sign-out. What the page then does goes through the admin API like any script.
struct ConsoleRoutes: Sendable {
    let admin: AdminService
    let sessions: ConsoleSessions
    let limiter: SignInLimiter

    var access: ConsoleAccess { ConsoleAccess(admin: admin, sessions: sessions) }

    /// The page's `Content-Security-Policy`: nothing from another host, no inline script or style, no framing.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// `GET /admin`: `308` to `/admin/` (the page's modules are relative to it).
    func redirectToPage() -> Response {
        var fields = HTTPFields()
        fields.append("Location", WirePath.consolePage.pattern)
        return Response(status: 308, headers: fields, body: .empty, route: RouteLabel.console.rawValue)
    }

    /// `GET /admin/`: the page.
    func page(_ request: RouteRequest) -> Response { Self.serve(ConsoleAssets.page, request.head) }

    /// `GET /admin/console/{file}`: one of the page's modules or its style sheet.
    func asset(_ request: RouteRequest) throws(ConsoleFailure) -> Response {
        guard let asset = ConsoleAssets.asset(named: request.parameter("file")) else { throw .noSuchAsset }
        return Self.serve(asset, request.head)
    }

    private static func serve(_ asset: ConsoleAsset, _ head: RequestHead) -> Response {
        var fields = HTTPFields()
        fields.append("ETag", asset.etag)
        fields.append("Cache-Control", "no-cache")
        fields.append("Content-Security-Policy", contentSecurityPolicy)
        fields.append("X-Content-Type-Options", "nosniff")
        fields.append("X-Frame-Options", "DENY")
        fields.append("Referrer-Policy", "no-referrer")
        if head.fields.listElements("if-none-match").contains(where: { $0.trimmingOWS() == asset.etag || $0.trimmingOWS() == "*" }) {
            return Response(status: 304, headers: fields, body: .empty, route: RouteLabel.console.rawValue)
        }
        fields.append("Content-Type", asset.contentType)
        return Response(status: 200, headers: fields, body: .bytes(asset.bytes), route: RouteLabel.console.rawValue)
    }

    /// `POST /admin/session` with `{"token": "<admin token>"}`: sets the session cookie and answers the CSRF
    /// token. A wrong token is `401`; after five wrong ones from an address within a minute, `429` with
    /// `Retry-After` (the right token too, until the minute has passed). Refused from a page of another origin.
    func signIn(_ request: RouteRequest) throws(ConsoleFailure) -> Handling {
        guard ConsoleAccess.isSameOrigin(request.head, safe: false) else { throw .crossOrigin }
        let address = SignInLimiter.host(of: request.clientAddress)
        let secure = request.secureTransport
        let logger = admin.logger.with(requestID: request.requestID)
        return .collectBody(limit: 4096) { [self] body in
            let outcome = Result { () throws(ConsoleFailure) -> Response in
                if let wait = limiter.retryAfter(address) { throw .signInThrottled(retryAfter: wait) }
                guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
                      let token = object["token"] as? String else { throw .badSignInBody }
                guard admin.isAdminToken(token) else {
                    limiter.recordFailure(address)
                    logger.warning(.consoleSession, "console sign-in refused: wrong admin token from \(address)")
                    throw .wrongAdminToken
                }
                let (session, cookie) = sessions.issue()
                logger.info(.consoleSession, "console sign-in from \(address)")
                return sessionAnswer(session, setCookie: ConsoleSessions.setCookie(cookie, secure: secure))
            }
            switch outcome {
            case .success(let response): return .response(response)
            case .failure(let failure): return .response(failure.answer.response(.consoleSession))
            }
        }
    }

    /// `GET /admin/session`: the signed-in page's CSRF token again (after a reload), or `{"signedIn": false}`
    /// (a `200`, so that a page that is not signed in logs no failed request).
    func current(_ request: RouteRequest) throws(ConsoleFailure) -> Response {
        guard let session = try? signedIn(request.head) else {
            return JSONAnswer.response(status: 200, ConsoleSessionAnswer(signedIn: false), .consoleSession)
        }
        if let refusal = access.refusal(request.head, session: session) { throw refusal }
        return sessionAnswer(session, setCookie: nil)
    }

    /// `DELETE /admin/session`: signs out (the cookie is deleted; this instance forgets the session). Needs the
    /// CSRF token like every state-changing request.
    func signOut(_ request: RouteRequest) throws(ConsoleFailure) -> Response {
        let session = try signedIn(request.head)
        if let refusal = access.refusal(request.head, session: session) { throw refusal }
        sessions.revoke(session)
        admin.logger.with(requestID: request.requestID).info(.consoleSession, "console sign-out")
        var fields = HTTPFields()
        fields.append("Set-Cookie", ConsoleSessions.setCookie(nil, secure: request.secureTransport))
        fields.append("Cache-Control", "no-store")
        return Response(status: 204, headers: fields, body: .empty, route: RouteLabel.consoleSession.rawValue)
    }

    private func signedIn(_ head: RequestHead) throws(ConsoleFailure) -> ConsoleSessions.Session {
        guard let value = ConsoleSessions.cookieValue(in: head.fields.values("cookie")), let session = sessions.verify(cookie: value) else {
            throw .notSignedIn
        }
        return session
    }

    private func sessionAnswer(_ session: ConsoleSessions.Session, setCookie: String?) -> Response {
        var fields = HTTPFields()
        if let setCookie { fields.append("Set-Cookie", setCookie) }
        let answer = ConsoleSessionAnswer(signedIn: true, csrfToken: sessions.csrfToken(for: session), expires: Timestamp.rfc3339(session.expires))
        return JSONAnswer.response(status: 200, answer, .consoleSession, headers: fields)
    }
}
