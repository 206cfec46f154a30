public import Foundation

/// An app account a purchase is bound to (`--account-policy`), and since when.
public struct AccountBinding: Sendable, Equatable {
    /// The account, as the app sent it with the receipt.
    public var account: String
    /// When the purchase was bound to it.
    public var boundAt: Date

    /// Creates a binding.
    public init(account: String, boundAt: Date) {
        self.account = account
        self.boundAt = boundAt
    }
}
