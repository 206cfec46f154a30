/// The rows behind some purchases, as a backend reads them (one read for a page): the original transactions
/// in answer order with their purchase dates, and their transactions, bindings and revocations.
struct PurchaseRows: Sendable, Equatable {
    /// An original transaction and its purchase date (its earliest transaction's), in milliseconds.
    struct Original: Sendable, Equatable {
        var id: String
        var purchasedMS: Int64
    }

    var originals: [Original] = []
    var transactions: [LedgerExport.Transaction] = []
    var bindings: [LedgerExport.Binding] = []
    var revocations: [LedgerExport.Revocation] = []
    /// Whether rows past `originals` matched (another page follows).
    var more = false
}
