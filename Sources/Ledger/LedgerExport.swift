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
        var restoredBy: String? = nil
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

    /// A row of `delivery_files` (version 4).
    struct DeliveryFile: Sendable, Equatable {
        var originalTransactionID: String
        var pack: String
        var version: Int64
        var path: String
        var sentRanges: String
        var firstSentMS: Int64
        var lastSentMS: Int64
        /// `version_chunks`, `version_bytes` (SQLite version 6): the version's totals, when recorded.
        var versionChunks: Int64? = nil
        var versionBytes: Int64? = nil
    }

    /// A row of `delivered_chunks` (version 4).
    struct Chunk: Sendable, Equatable {
        var originalTransactionID: String
        var pack: String
        var version: Int64
        var path: String
        var offset: Int64
        var length: Int64
        var deliveredMS: Int64
    }

    /// A row of `outbox` (version 4), oldest first; claims are not copied.
    struct OutboxRow: Sendable, Equatable {
        var queue: String
        var key: String
        var orderingKey: String
        var payload: String
        var createdMS: Int64
        var deadlineMS: Int64
        var state: String
        var attempts: Int64
        var nextAttemptMS: Int64
        var finishedMS: Int64?
        var lastError: String?
        var outcome: String?
    }

    var transactions: [Transaction] = []
    var bindings: [Binding] = []
    var revocations: [Revocation] = []
    var notifications: [Notification] = []
    var settings: [Setting] = []
    var deliveryFiles: [DeliveryFile] = []
    var chunks: [Chunk] = []
    var outbox: [OutboxRow] = []

    /// The original transactions the export mentions (their access state changes when it is imported).
    var originals: Set<String> {
        Set(transactions.map(\.originalTransactionID) + bindings.map(\.originalTransactionID)
            + revocations.map(\.originalTransactionID))
    }
}
