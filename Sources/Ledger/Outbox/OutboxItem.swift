public import Foundation

/// An outbox entry as the ledger holds it: the entry, its position and its attempts so far.
public struct OutboxItem: Sendable, Equatable {
    /// The ledger's sequence number (increasing in queueing order).
    public var id: Int64
    /// The entry as queued.
    public var entry: OutboxEntry
    /// Pending, sent or abandoned.
    public var state: OutboxState
    /// Attempts made (failed ones, and the successful one if it is sent).
    public var attempts: Int
    /// When the next attempt is due (pending items).
    public var nextAttempt: Date
    /// When it was sent or abandoned.
    public var finished: Date?
    /// The last failure's description, if any.
    public var lastError: String?
    /// What the attempt that finished it recorded (a consumption answer: the body sent), if anything.
    public var outcome: String?

    /// An item; see the properties.
    public init(id: Int64, entry: OutboxEntry, state: OutboxState, attempts: Int, nextAttempt: Date, finished: Date?,
                lastError: String?, outcome: String? = nil) {
        self.outcome = outcome
        self.id = id
        self.entry = entry
        self.state = state
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.finished = finished
        self.lastError = lastError
    }
}
