public import Foundation

/// Something to send later, as it is queued (`Ledger.enqueue(_:)`).
public struct OutboxEntry: Sendable, Equatable {
    /// The queue.
    public var queue: OutboxQueue
    /// A key unique within the ledger: queueing an entry whose key is already there (a redelivered
    /// notification, say) adds nothing.
    public var key: String
    /// Items with the same ordering key are sent one at a time, oldest first (a purchase's events).
    public var orderingKey: String
    /// What to send (the queue's own format, usually JSON).
    public var payload: String
    /// When it was queued; also the earliest first attempt.
    public var created: Date
    /// After this, it is abandoned instead of tried again.
    public var deadline: Date

    /// An entry; see the properties.
    public init(queue: OutboxQueue, key: String, orderingKey: String, payload: String, created: Date, deadline: Date) {
        self.queue = queue
        self.key = key
        self.orderingKey = orderingKey
        self.payload = payload
        self.created = created
        self.deadline = deadline
    }
}
