/// The outcome of binding an original transaction to an app account.
public enum BindingDecision: Sendable, Equatable {
    /// The account may use the purchase (newly bound, already bound, or no account given).
    case granted
    /// The purchase belongs to another account and the policy is `first`: nothing was changed.
    case boundToOtherAccount
}
