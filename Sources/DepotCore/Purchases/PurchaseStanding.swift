/// What the ledger knows about one original transaction for the account that presents it, as
/// ``EntitlementRules`` needs it.
public struct PurchaseStanding: Sendable, Equatable {
    /// Whether a token for the purchase may be honoured for this account.
    public enum Access: Sendable, Equatable {
        case allowed
        /// Refunded or revoked.
        case revoked
        /// Moved to another account (the `transfer` policy).
        case transferred
    }

    /// The account policy refused to bind the purchase to this account (`first`: it belongs to another).
    public var refusedBinding: Bool
    public var access: Access

    public init(refusedBinding: Bool = false, access: Access = .allowed) {
        self.refusedBinding = refusedBinding
        self.access = access
    }
}
