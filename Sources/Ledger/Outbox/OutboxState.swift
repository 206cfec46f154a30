/// Where an outbox item stands.
public enum OutboxState: String, Sendable, Equatable, CaseIterable {
    /// Waiting for its next attempt (or its first).
    case pending
    /// Accepted by the receiver.
    case sent
    /// Given up: its deadline passed, or the receiver refused it for good.
    case abandoned
}
