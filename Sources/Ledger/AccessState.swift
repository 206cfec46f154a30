/// Whether a download token for an original transaction may still be honoured.
public enum AccessState: Sendable, Equatable {
    /// Serve the pack.
    case allowed
    /// The purchase was refunded or revoked (`403 revoked`).
    case revoked
    /// The purchase is now bound to another account (`transfer` policy moved it away from this one).
    case transferred
}
