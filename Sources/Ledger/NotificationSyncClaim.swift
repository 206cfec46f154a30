public import Foundation

/// The answer to an instance asking for one environment's notification catch-up window (spec
/// app-store-server-api §6): instances sharing a ledger take turns, so one instance reads a given window.
public enum NotificationSyncClaim: Sendable, Equatable {
    /// This instance holds the window until it completes or releases it (or the lease lapses). The window
    /// starts where the last successful sync ended (nil: no sync has completed yet).
    case claimed(syncedThrough: Date?)
    /// Another instance holds it until the date: skip this window.
    case held(until: Date)
}
