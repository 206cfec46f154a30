/// What `Ledger.copy(from:to:dataDirectory:)` added to the PostgreSQL ledger: rows new to it, per table
/// (all zeros when the copy is run again).
public struct LedgerCopyReport: Sendable, Equatable {
    /// Validated transactions added.
    public var transactions = 0
    /// Account bindings added.
    public var bindings = 0
    /// Revocations added.
    public var revocations = 0
    /// Processed notification IDs added.
    public var notifications = 0
    /// Settings added (the download-token key, when the SQLite ledger held one).
    public var settings = 0
    /// Delivery-record rows added: files and delivered chunks (app-store-server-api §7).
    public var deliveries = 0
    /// Outbox items added (webhook events and consumption answers, in their state: pending ones are sent
    /// from PostgreSQL).
    public var outbox = 0

    /// An empty report.
    public init() {}

    /// The number of rows added, all tables together.
    public var total: Int { transactions + bindings + revocations + notifications + settings + deliveries + outbox }
}
