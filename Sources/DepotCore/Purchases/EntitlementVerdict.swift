public import DepotWire

/// What ``EntitlementRules`` decided for one purchase: the pack it releases, or why it releases nothing.
public enum EntitlementVerdict: Sendable, Equatable {
    /// The purchase releases `pack`; the server issues a token for it.
    case granted(PurchaseFact, pack: String)
    /// The purchase releases nothing (`rejected` in the answer).
    case rejected(PurchaseFact, RejectedPurchase.Reason)

    /// The purchase judged.
    public var fact: PurchaseFact {
        switch self {
        case .granted(let fact, _), .rejected(let fact, _): fact
        }
    }
}
