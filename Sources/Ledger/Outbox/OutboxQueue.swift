/// The durable queues the ledger keeps for work that must happen after a request was answered.
public enum OutboxQueue: String, Sendable, Equatable, CaseIterable {
    /// Events for the studio's backend (spec app-store-server-api §8).
    case webhook
    /// Answers to Apple's `CONSUMPTION_REQUEST` (spec app-store-server-api §7).
    case consumption
}
