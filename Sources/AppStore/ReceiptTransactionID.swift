/// What a legacy receipt says about its purchases before Apple is asked (spec §3 step 1).
public enum ReceiptTransactionID: Sendable, Equatable {
    /// A transaction ID to look the customer's history up with.
    case found(String)
    /// An app receipt without any in-app purchase: `200` with empty `entitlements`, no call to Apple.
    case noPurchase
    /// Neither an app receipt nor a transaction receipt: `422 receipt_invalid` with `check: "format"`.
    /// The reason never quotes the receipt.
    case notAReceipt(reason: String)
}
