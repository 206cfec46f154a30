import DepotServer
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 16: the console's page, sign-in with the admin token, the session cookie, CSRF, origins, rate limiting.
@Suite("Console: page, sign-in, sessions and CSRF")
struct ConsoleSignInTests {
    static let adminToken = "console-admin-token-0123456789abcdef"

    static func start() async throws -> TestDepot {
        try await TestDepot.start { $0.adminToken = adminToken }
    }

    /// Signs in; returns the cookie pair (`depot_session=...`) and the CSRF token.
    static func signIn(_ http: ConsoleHTTP) async throws -> (cookie: String, csrf: String, response: RawResponse) {
        let response = try await http.send("POST", "/admin/session", [("Content-Type", "application/json")],
                                           body: Array("{\"token\": \"\(adminToken)\"}".utf8))
        let setCookie = try #require(response.header("Set-Cookie"))
        let pair = String(setCookie.split(separator: ";")[0])
        let csrf = try #require(ConsoleHTTP.json(response)["csrfToken"] as? String)
        return (pair, csrf, response)
    }

    @Test func thePageAndItsModulesAreServedWithAStrictPolicy() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let page = try await http.send("GET", "/admin/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        let policy = try #require(page.header("Content-Security-Policy"))
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe-inline") && !policy.contains("http"))
        #expect(page.text.contains("<script type=\"module\" src=\"console/app.js\"></script>"))
        // No script, style or image from another host, and no inline script or style, in any file of the console.
        #expect(!page.text.contains("<script>") && !page.text.contains("style=") && !page.text.contains("//"))
        let redirect = try await http.send("GET", "/admin")
        #expect(redirect.status == 308 && redirect.header("Location") == "/admin/")
        for module in ["app.js", "api.js", "packs.js", "upload.js", "traffic.js", "charts.js", "products.js", "dom.js", "format.js"] {
            let response = try await http.send("GET", "/admin/console/" + module)
            #expect(response.status == 200, "\(module)")
            #expect(response.header("Content-Type") == "text/javascript; charset=utf-8")
            // No URL of another host (the SVG namespace is a name, not a fetch).
            let text = response.text.replacingOccurrences(of: "'http://www.w3.org/2000/svg'", with: "")
            #expect(!text.contains("http://") && !text.contains("https://") && !text.contains("innerHTML"), "\(module)")
            let again = try await http.send("GET", "/admin/console/" + module, [("If-None-Match", response.header("ETag") ?? "")])
            #expect(again.status == 304)
        }
        let style = try await http.send("GET", "/admin/console/console.css")
        #expect(style.header("Content-Type") == "text/css; charset=utf-8" && !style.text.contains("@import") && !style.text.contains("url("))
        #expect(try await http.send("GET", "/admin/console/nothing.js").status == 404)
    }

    @Test func withoutAnAdminTokenTheConsoleIs404() async throws {
        let depot = try await TestDepot.start()
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        #expect(try await http.send("GET", "/admin/").status == 404)
        #expect(try await http.send("GET", "/admin/console/app.js").status == 404)
        #expect(try await http.send("POST", "/admin/session", [("Content-Type", "application/json")], body: Array("{\"token\": \"x\"}".utf8)).status == 404)
    }

    @Test func signInSetsAStrictHttpOnlyCookieAndTheSessionAnswersItsCSRFToken() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let wrong = try await http.send("POST", "/admin/session", [("Content-Type", "application/json")], body: Array("{\"token\": \"not-the-token-at-all\"}".utf8))
        #expect(wrong.status == 401 && wrong.header("Set-Cookie") == nil)
        let (cookie, csrf, response) = try await Self.signIn(http)
        #expect(response.status == 200)
        let setCookie = try #require(response.header("Set-Cookie"))
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/admin", "Max-Age=43200"] { #expect(setCookie.contains(attribute), "\(setCookie)") }
        #expect(!setCookie.contains("Secure"), "plain HTTP from no trusted proxy: no Secure")
        #expect(!setCookie.contains(Self.adminToken) && !cookie.contains(Self.adminToken))
        let expires = try #require(ConsoleHTTP.json(response)["expires"] as? String)
        let expiry = try #require(ISO8601DateFormatter().date(from: expires))
        #expect(abs(expiry.timeIntervalSinceNow - 12 * 3600) < 120)

        let current = try await http.send("GET", "/admin/session", [("Cookie", cookie)])
        #expect(ConsoleHTTP.json(current)["signedIn"] as? Bool == true && ConsoleHTTP.json(current)["csrfToken"] as? String == csrf)
        let anonymous = try await http.send("GET", "/admin/session")
        #expect(anonymous.status == 200 && ConsoleHTTP.json(anonymous)["signedIn"] as? Bool == false && ConsoleHTTP.json(anonymous)["csrfToken"] == nil)
        // The session opens the admin API's reads without the bearer token.
        #expect(try await http.send("GET", "/admin/v1/traffic", [("Cookie", cookie)]).status == 200)
        #expect(try await http.send("GET", "/admin/v1/traffic").status == 401)
        #expect(try await http.send("GET", "/admin/v1/traffic", [("Cookie", "depot_session=v1.9999999999.forged.AAAA")]).status == 401)
        // A cookie signed for another admin token is refused.
        let other = ConsoleSessions(adminToken: "another-admin-token-0123456789").issue().cookie
        #expect(try await http.send("GET", "/admin/v1/traffic", [("Cookie", "depot_session=" + other)]).status == 401)
    }

    @Test func stateChangingRequestsNeedTheCSRFTokenFromTheSameOrigin() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let (cookie, csrf, _) = try await Self.signIn(http)
        let upload = "/admin/v1/packs/level8/1/files/a.bin"
        let body = Array("abc".utf8)
        // No session cookie (and no bearer token).
        let anonymous = try await http.send("PUT", upload, [("X-CSRF-Token", csrf)], body: body)
        #expect(anonymous.status == 401)
        // The cookie without the CSRF token, or with another session's.
        let noToken = try await http.send("PUT", upload, [("Cookie", cookie)], body: body)
        #expect(noToken.status == 403 && ConsoleHTTP.errorCode(noToken) == "csrf_token_invalid")
        let (_, otherCSRF, _) = try await Self.signIn(http)
        let otherToken = try await http.send("PUT", upload, [("Cookie", cookie), ("X-CSRF-Token", otherCSRF)], body: body)
        #expect(otherToken.status == 403 && ConsoleHTTP.errorCode(otherToken) == "csrf_token_invalid")
        // The cookie sent by a page of another origin, even with the token.
        for header in [("Origin", "http://evil.example"), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "same-site"), ("Origin", "null")] {
            let crossOrigin = try await http.send("PUT", upload, [("Cookie", cookie), ("X-CSRF-Token", csrf), header], body: body)
            #expect(crossOrigin.status == 403 && ConsoleHTTP.errorCode(crossOrigin) == "cross_origin", "\(header)")
        }
        let crossRead = try await http.send("GET", "/admin/v1/traffic", [("Cookie", cookie), ("Sec-Fetch-Site", "cross-site")])
        #expect(crossRead.status == 403)
        // Nothing was written by the refused requests.
        #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/.staging/uploads/level8/1/a.bin"))
        // The page's own request: cookie, token, same origin.
        let accepted = try await http.send("PUT", upload, [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Origin", "http://127.0.0.1:\(depot.port)"),
                                                          ("Sec-Fetch-Site", "same-origin")], body: body)
        #expect(accepted.status == 201, "\(accepted.text)")
        // A script's bearer token needs no CSRF token.
        let script = try await http.send("PUT", "/admin/v1/packs/level8/1/files/b.bin", [("Authorization", "Bearer \(Self.adminToken)")], body: body)
        #expect(script.status == 201)
        // Sign-in from another origin is refused too (login CSRF).
        let foreignSignIn = try await http.send("POST", "/admin/session", [("Content-Type", "application/json"), ("Origin", "http://evil.example")],
                                                body: Array("{\"token\": \"\(Self.adminToken)\"}".utf8))
        #expect(foreignSignIn.status == 403 && foreignSignIn.header("Set-Cookie") == nil)
    }

    @Test func signOutEndsTheSession() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let (cookie, csrf, _) = try await Self.signIn(http)
        #expect(try await http.send("DELETE", "/admin/session", [("Cookie", cookie)]).status == 403, "sign-out needs the CSRF token")
        let out = try await http.send("DELETE", "/admin/session", [("Cookie", cookie), ("X-CSRF-Token", csrf)])
        #expect(out.status == 204)
        let cleared = try #require(out.header("Set-Cookie"))
        #expect(cleared.hasPrefix("depot_session=;") && cleared.contains("Max-Age=0"))
        #expect(try await http.send("GET", "/admin/v1/traffic", [("Cookie", cookie)]).status == 401)
        #expect(ConsoleHTTP.json(try await http.send("GET", "/admin/session", [("Cookie", cookie)]))["signedIn"] as? Bool == false)
    }

    @Test func wrongTokensAreRateLimitedPerAddress() async throws {
        let depot = try await Self.start()
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let wrongBody = Array("{\"token\": \"wrong-token-wrong-token\"}".utf8)
        // Five wrong tokens within the minute, then the sixth is refused. On a saturated machine the requests
        // can span more than a minute, so the first ones may be forgotten: send until the limit answers, and
        // count the refusals before it (never fewer than five; a limiter that never limits fails the bound).
        // `limitedAt` is taken before the limited request is sent: the server's refusal (in whole seconds) came
        // no earlier, so its window ends after limitedAt + Retry-After - 1 whatever the answer's latency.
        var refused = 0
        var limitedAt = Date()
        var limited = try await http.send("POST", "/admin/session", [("Content-Type", "application/json")], body: wrongBody)
        while limited.status == 401 && refused < 20 {
            refused += 1
            limitedAt = Date()
            limited = try await http.send("POST", "/admin/session", [("Content-Type", "application/json")], body: wrongBody)
        }
        #expect(refused >= 5 && refused < 20, "\(refused) wrong tokens answered 401 before the limit")
        #expect(limited.status == 429 && ConsoleHTTP.errorCode(limited) == "too_many_attempts")
        let wait = try #require(Int(limited.header("Retry-After") ?? ""))
        #expect(wait >= 1 && wait <= 60)
        // Until the minute has passed, even the right token is refused from this address (asserted for answers
        // that certainly came within the Retry-After; a saturated machine can take longer than that).
        let right = try await http.send("POST", "/admin/session", [("Content-Type", "application/json")],
                                        body: Array("{\"token\": \"\(Self.adminToken)\"}".utf8))
        if Date().timeIntervalSince(limitedAt) < Double(wait) - 1 {
            #expect(right.status == 429 && right.header("Set-Cookie") == nil)
        }
        let malformed = try await http.send("POST", "/admin/session", [("Content-Type", "application/json")], body: Array("not json".utf8))
        if Date().timeIntervalSince(limitedAt) < Double(wait) - 1 {
            #expect(malformed.status == 429)
        }
        // The admin token never reaches a log line, whatever happened.
        depot.app.logger.output.flush()
        let logs = depot.logs.lines.joined(separator: "\n")
        #expect(logs.contains("console sign-in refused"))
        #expect(!logs.contains(Self.adminToken) && !logs.contains("wrong-token-wrong-token"))
    }

    @Test func theLimiterForgetsFailuresAfterTheWindowAndBoundsItsMemory() {
        let clock = Mutex<Int64>(1000)
        let limiter = SignInLimiter(limit: 5, window: 60, addressLimit: 3, now: { clock.withLock { $0 } })
        for _ in 0..<5 { limiter.recordFailure("10.0.0.1") }
        #expect(limiter.retryAfter("10.0.0.1") == 60)
        #expect(limiter.retryAfter("10.0.0.2") == nil, "per address")
        clock.withLock { $0 = 1030 }
        #expect(limiter.retryAfter("10.0.0.1") == 30)
        clock.withLock { $0 = 1061 }
        #expect(limiter.retryAfter("10.0.0.1") == nil)
        for address in ["a", "b", "c", "d"] { limiter.recordFailure(address) }
        #expect(limiter.trackedAddresses <= 3)
        #expect(SignInLimiter.host(of: "127.0.0.1:5000") == "127.0.0.1")
        #expect(SignInLimiter.host(of: "[::1]:5000") == "::1")
    }

    /// A full table forgets the address that failed least recently, and its bookkeeping stays bounded by the
    /// addresses it tracks however many new addresses fail (each costs O(1) amortized, not a scan of them all).
    @Test func aFullLimiterForgetsTheLeastRecentlyFailingAddressAndStaysBounded() {
        let clock = Mutex<Int64>(1000)
        let limiter = SignInLimiter(limit: 5, window: 60, addressLimit: 3, now: { clock.withLock { $0 } })
        for address in ["a", "b", "c"] {
            limiter.recordFailure(address)
            clock.withLock { $0 += 1 }
        }
        for _ in 0..<5 { limiter.recordFailure("a") }   // a is limited, and now the most recent
        clock.withLock { $0 += 1 }
        limiter.recordFailure("d")                      // forgets b, the least recently failing
        #expect(limiter.trackedAddresses == 3)
        #expect(limiter.retryAfter("a") != nil, "a's failures are kept")
        limiter.recordFailure("b")                      // b starts again from one failure: c is forgotten now
        for _ in 0..<4 { limiter.recordFailure("b") }
        #expect(limiter.retryAfter("b") != nil)
        #expect(limiter.retryAfter("a") != nil)
        #expect(limiter.trackedAddresses == 3)
        // 20,000 failures from ever new addresses, then 10,000 from one: the table holds 3, and what it keeps
        // to find the stalest stays a small multiple of that.
        for index in 0..<20_000 {
            limiter.recordFailure("new-\(index)")
            if index % 1000 == 0 { clock.withLock { $0 += 1 } }
        }
        for _ in 0..<10_000 { limiter.recordFailure("same") }
        #expect(limiter.trackedAddresses == 3)
        #expect(limiter.orderEntries <= 4 * 16 + 1, "\(limiter.orderEntries) entries")
    }

    @Test func sessionsAreSignedExpireAndCanBeRevoked() {
        let clock = Mutex<Int64>(1_000_000)
        let sessions = ConsoleSessions(adminToken: Self.adminToken, now: { clock.withLock { $0 } })
        let (session, cookie) = sessions.issue()
        #expect(sessions.verify(cookie: cookie) == session)
        #expect(session.expires == 1_000_000 + 12 * 3600)
        // A second instance with the same token takes it (no shared state).
        #expect(ConsoleSessions(adminToken: Self.adminToken, now: { 1_000_000 }).verify(cookie: cookie) == session)
        var parts = cookie.split(separator: ".").map(String.init)
        parts[1] = String(session.expires + 3600)
        #expect(sessions.verify(cookie: parts.joined(separator: ".")) == nil, "a longer expiry breaks the signature")
        #expect(sessions.verify(cookie: "v1.abc") == nil)
        let csrf = sessions.csrfToken(for: session)
        #expect(sessions.isValidCSRF(csrf, for: session))
        #expect(!sessions.isValidCSRF(csrf, for: sessions.issue().session))
        clock.withLock { $0 += 12 * 3600 }
        #expect(sessions.verify(cookie: cookie) == nil, "expired after 12 h")
        clock.withLock { $0 -= 1 }
        #expect(sessions.verify(cookie: cookie) != nil)
        sessions.revoke(session)
        #expect(sessions.verify(cookie: cookie) == nil)
    }
}
