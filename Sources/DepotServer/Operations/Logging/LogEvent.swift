/// What a log line is about: the `event` field of a JSON line, a small fixed set so that collectors can
/// filter on it (operations.md §2). Text lines do not show it.
public enum LogEvent: String, Sendable, CaseIterable {
    /// One finished request (the access line).
    case request
    /// The server started, or started without something it needs (no usable catalog).
    case lifecycle
    /// The server is stopping: the signal that asked for it, connections the drain limit cut off, stopped.
    case shutdown
    /// A catalog was swapped in.
    case catalogReloaded = "catalog_reloaded"
    /// A catalog on disk was refused (the last good one, if any, keeps serving).
    case catalogRefused = "catalog_refused"
    /// Something in the content tree is ignored (a version without a manifest, a damaged record, ...).
    case contentWarning = "content_warning"
    /// Apple could not be asked (`verifyReceipt` down, a timeout, a JWS check that could not run).
    case appleUnavailable = "apple_unavailable"
    /// Apple refused the server's own configuration (shared secret, URLs).
    case appleMisconfigured = "apple_misconfigured"
    /// An App Store Server API answer that grants nothing or was cut short: a signed item that failed its check,
    /// a transaction neither environment knows, a history longer than the pages read.
    case appleRefused = "apple_refused"
    /// A notification catch-up (App Store Server API notification history) that recovered something or failed.
    case notificationSync = "notification_sync"
    /// The ledger could not record something.
    case ledgerFailed = "ledger_failed"
    /// An App Store notification was applied or ignored.
    case notification
    /// A support decision revoked or restored a purchase (admin API).
    case supportDecision = "support_decision"
    /// A pack version was published, a product retired or un-retired, versions pruned (admin API).
    case catalogChanged = "catalog_changed"
    /// The publisher console: a sign-in, a refused sign-in (wrong token), a sign-out.
    case consoleSession = "console_session"
    /// The delivery record could not be written (kept for the next round).
    case deliveryRecord = "delivery_record"
    /// A webhook event could not be queued, or was given up.
    case webhook
    /// An answer to a `CONSUMPTION_REQUEST` was sent, retried or given up.
    case consumption
    /// Log lines were dropped while standard error did not take them.
    case logsDropped = "logs_dropped"
}
