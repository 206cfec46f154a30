/// One page of an account's purchases, newest first.
public struct PurchasePage: Sendable, Equatable {
    /// At most the page size asked for.
    public var purchases: [PurchaseRecord]
    /// Where the next page starts; `nil` on the last page.
    public var next: PurchaseCursor?

    /// Creates a page.
    public init(purchases: [PurchaseRecord], next: PurchaseCursor?) {
        self.purchases = purchases
        self.next = next
    }
}
