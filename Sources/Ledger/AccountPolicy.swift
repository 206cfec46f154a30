/// What happens when a second app account presents a purchase already bound to another account
/// (spec §3, `--account-policy`).
public enum AccountPolicy: String, Sendable, CaseIterable {
    /// The newest account gets the purchase; the previous owner's tokens stop working (`.transferred`).
    case transfer
    /// The first account keeps it; later accounts are refused (`.boundToOtherAccount`).
    case first
    /// Every account that presents it keeps it.
    case shared
}
