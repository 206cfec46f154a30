/// Why `POST /v1/notifications/appstore` (spec §4.5) was not acknowledged.
package enum NotificationFailure: Error, Sendable, Equatable {
    /// Not a notification: not JSON, no `signedPayload`/`notification_type`, wrong types, an unreadable JWS.
    case badRequest(String)
    /// A verified notification for another app.
    case wrongBundle(String)
    /// The V2 signature does not verify; `check` names the failed check.
    case invalidSignature(String, check: String)
    /// The V1 password is not the shared secret (or none is configured).
    case invalidPassword
    /// The signature cannot be checked right now: Apple will send it again.
    case verificationUnavailable(String)
    /// The ledger could not record the notification: Apple will send it again.
    case ledgerUnavailable
}
