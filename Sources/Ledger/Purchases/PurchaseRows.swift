/// The rows behind some purchases, as a backend reads them (one read for a page, a few statements whatever
/// its size): the original transactions in answer order with their purchase dates, and their transactions,
/// bindings, revocations, delivery record and consumption answers.
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
    /// Every file record of the originals (`Ledger.deliveries(originalTransactionID:)` of each).
    var deliveries: [LedgerDelivery] = []
    /// The consumption queue's items of the originals (ordering key: the original), oldest first.
    var consumptionItems: [OutboxItem] = []
    /// Whether rows past `originals` matched (another page follows).
    var more = false
}
