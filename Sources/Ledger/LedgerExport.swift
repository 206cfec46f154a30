/// Every row of a ledger, as `copy(from:to:)` moves it from SQLite to PostgreSQL. Times are milliseconds.
struct LedgerExport: Sendable, Equatable {
    /// A row of `transactions`.
    struct Transaction: Sendable, Equatable {
        var transactionID: String
        var originalTransactionID: String
        var productID: String
        var environment: String
        var purchaseDateMS: Int64
        var expiresDateMS: Int64?
        var revocationDateMS: Int64?
        var source: String
        var firstSeenMS: Int64
        var updatedMS: Int64
    }

    /// A row of `account_bindings`.
    struct Binding: Sendable, Equatable {
        var originalTransactionID: String
        var account: String
        var boundAtMS: Int64
    }

    /// A row of `revocations`.
    struct Revocation: Sendable, Equatable {
        var transactionID: String
        var originalTransactionID: String
        var revokedAtMS: Int64
        var reason: String
        var restoredAtMS: Int64?
    }

    /// A row of `processed_notifications`.
    struct Notification: Sendable, Equatable {
        var id: String
        var type: String
        var receivedMS: Int64
    }

    /// A row of `ledger_settings`.
    struct Setting: Sendable, Equatable {
        var name: String
        var value: [UInt8]
    }

    var transactions: [Transaction] = []
    var bindings: [Binding] = []
    var revocations: [Revocation] = []
    var notifications: [Notification] = []
    var settings: [Setting] = []

    /// The original transactions the export mentions (their access state changes when it is imported).
    var originals: Set<String> {
        Set(transactions.map(\.originalTransactionID) + bindings.map(\.originalTransactionID)
            + revocations.map(\.originalTransactionID))
    }
}
