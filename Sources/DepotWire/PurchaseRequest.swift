/// The body of `POST /v1/receipts` (spec §4.2): a legacy receipt or StoreKit 2 transactions, and the app
/// account. Absent fields are left out.
public struct PurchaseRequest: Sendable, Hashable, Codable {
    /// The app receipt, base64.
    public var receipt: String?
    /// StoreKit 2 signed transactions (JWS).
    public var transactions: [String]?
    /// The app's account ID for the purchase (account policy).
    public var account: String?

    public init(receipt: String? = nil, transactions: [String]? = nil, account: String? = nil) {
        self.receipt = receipt
        self.transactions = transactions
        self.account = account
    }
}
