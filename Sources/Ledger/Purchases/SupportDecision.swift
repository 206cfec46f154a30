/// A support decision about one purchase (spec app-store-server-api §8).
public enum SupportDecision: String, Sendable, Equatable, CaseIterable {
    /// Take access away, as a refund would.
    case revoke
    /// Give access back: every revocation in force is lifted, Apple's as well as support's.
    case restore
}
