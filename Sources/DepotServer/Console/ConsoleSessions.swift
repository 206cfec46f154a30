import DepotCore
import DepotCrypto
import Foundation
import Synchronization

/// The console's sign-in sessions, without shared state: a session is a cookie value
/// `v1.<expiry>.<id>.<tag>` whose tag is HMAC-SHA256 over `v1.<expiry>.<id>` with a key derived from the admin
/// token, so every instance configured with the same token accepts it, a restart keeps it, and changing the
/// token ends every session. The CSRF token is an HMAC of the session's random ID under the same key.
///
/// Signing out remembers the session's ID on this instance until it would have expired (and the browser drops the
/// cookie); another instance would still take a copy of the cookie kept elsewhere until its expiry.
package final class ConsoleSessions: Sendable {
    /// The cookie's name.
    static let cookieName = "depot_session"
    /// A session lasts 12 hours.
    static let lifetime: Int64 = 12 * 3600
    /// Signed-out sessions remembered at most (the oldest are forgotten first).
    static let revokedLimit = 10_000

    /// A verified session.
    package struct Session: Sendable, Equatable {
        let id: String
        /// Unix seconds.
        package let expires: Int64
    }

    private let key: [UInt8]
    private let now: @Sendable () -> Int64
    /// Signed-out session IDs with their expiry.
    private let revoked = Mutex<[String: Int64]>([:])

    /// Sessions whose cookies are signed with a key derived from `adminToken`; `now` gives Unix seconds.
    package init(adminToken: String, now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        key = HMACSHA256.authenticate(Array("depot console session v1".utf8), key: Array(adminToken.utf8))
        self.now = now
    }

    /// A new session and its cookie value.
    package func issue() -> (session: Session, cookie: String) {
        let session = Session(id: Base64URL.encode(SecureRandom.bytes(18)), expires: now() + Self.lifetime)
        let signed = "v1.\(session.expires).\(session.id)"
        return (session, signed + "." + Base64URL.encode(HMACSHA256.authenticate(Array(signed.utf8), key: key)))
    }

    /// The session a cookie value stands for: nil when it is malformed, forged, expired or signed out.
    package func verify(cookie: String) -> Session? {
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let expires = Int64(parts[1]), !parts[2].isEmpty,
              let tag = Base64URL.decode(parts[3]) else { return nil }
        let signed = "v1.\(parts[1]).\(parts[2])"
        guard HMACSHA256.isValid(tag, for: Array(signed.utf8), key: key) else { return nil }
        guard expires > now() else { return nil }
        let id = String(parts[2])
        if revoked.withLock({ $0[id] != nil }) { return nil }
        return Session(id: id, expires: expires)
    }

    /// The CSRF token of a session (what `X-CSRF-Token` must carry).
    package func csrfToken(for session: Session) -> String {
        Base64URL.encode(HMACSHA256.authenticate(Array("csrf.\(session.id)".utf8), key: key))
    }

    /// Whether `token` is the CSRF token of `session` (constant time).
    package func isValidCSRF(_ token: String, for session: Session) -> Bool {
        guard let bytes = Base64URL.decode(token) else { return false }
        return HMACSHA256.isValid(bytes, for: Array("csrf.\(session.id)".utf8), key: key)
    }

    /// Ends a session on this instance.
    package func revoke(_ session: Session) {
        let time = now()
        revoked.withLock { revoked in
            revoked = revoked.filter { $0.value > time }
            if revoked.count >= Self.revokedLimit, let oldest = revoked.min(by: { $0.value < $1.value }) {
                revoked[oldest.key] = nil
            }
            revoked[session.id] = session.expires
        }
    }

    /// The `depot_session` value among a request's `Cookie` fields, if any.
    static func cookieValue(in cookieFields: [String]) -> String? {
        for field in cookieFields {
            for pair in field.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { continue }
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The `Set-Cookie` value that stores `cookie` (`Secure` when the page came over TLS) or, with nil, deletes it.
    static func setCookie(_ cookie: String?, secure: Bool) -> String {
        var value = "\(cookieName)=\(cookie ?? ""); Path=/admin; HttpOnly; SameSite=Strict; Max-Age=\(cookie == nil ? 0 : lifetime)"
        if secure { value += "; Secure" }
        return value
    }
}
