public import Foundation

/// What one notification catch-up did (spec app-store-server-api §6), environment by environment.
public struct NotificationSyncReport: Sendable, Equatable {
    /// One environment's window.
    public struct Window: Sendable, Equatable {
        /// How the window went.
        public enum Outcome: Sendable, Equatable {
            /// Every page was read and applied; the stored window moved to `end` (unless `--since` chose the start).
            case synced
            /// Another instance holds this environment's window until the date: this one left it alone.
            case skipped(heldUntil: Date)
            /// Apple or the ledger failed; the stored window stays where it was, to be covered next time.
            case failed(reason: String)
        }

        /// `Production` or `Sandbox`.
        public var environment: String
        /// The window asked for (nil when skipped).
        public var start: Date?
        public var end: Date?
        public var outcome: Outcome
        /// Notifications in the window that verified.
        public var seen = 0
        /// Of those, the ones this ledger had not received before (missed notifications, recovered).
        public var new = 0
        /// Of those, the ones that revoked or restored access.
        public var changed = 0
        /// Items that failed a check (another app, a bad signature): reported, never applied.
        public var refused = 0
    }

    public var windows: [Window]

    /// Notifications seen in every window.
    public var seen: Int { windows.reduce(0) { $0 + $1.seen } }
    /// Notifications that changed access.
    public var changed: Int { windows.reduce(0) { $0 + $1.changed } }
    /// Notifications received for the first time.
    public var new: Int { windows.reduce(0) { $0 + $1.new } }
    /// True when no window failed.
    public var succeeded: Bool {
        windows.allSatisfy { if case .failed = $0.outcome { false } else { true } }
    }
}
