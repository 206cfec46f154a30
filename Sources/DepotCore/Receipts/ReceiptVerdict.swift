/// The state of one purchase from a validated receipt.
public struct ReceiptVerdict: Sendable, Equatable {
    /// What a purchase grants, as far as the receipt tells.
    public enum State: String, Sendable, Equatable, CaseIterable {
        /// Not cancelled and, for a subscription, not yet expired: may unlock content.
        case active
        /// A subscription whose `expires_date` is not in the future.
        case expired
        /// Refunded or revoked (`cancellation_date_ms` present); wins over `expired`.
        case revoked
    }

    /// The purchase.
    public var purchase: ReceiptPurchase
    /// Its state.
    public var state: State

    /// Creates a verdict.
    public init(purchase: ReceiptPurchase, state: State) {
        self.purchase = purchase
        self.state = state
    }
}
