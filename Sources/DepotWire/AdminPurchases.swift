/// `GET /admin/v1/purchases?transaction=ID` or `?account=A` (spec app-store-server-api §8): what the ledger
/// knows of purchases, newest first, at most 100 a page; `next` is the `?after=` of the next page.
/// `POST /admin/v1/purchases/{originalTransactionId}/revoke|restore` answer one ``Purchase``.
public struct AdminPurchases: Sendable, Hashable, Codable {
    /// One purchase: an original transaction with its renewals or restores.
    public struct Purchase: Sendable, Hashable, Codable {
        public var originalTransactionId: String
        /// The product of its latest transaction.
        public var productId: String
        /// The pack the product unlocks in the catalog now; `null` when it has none (or is not in the catalog).
        public var pack: String?
        /// The account it was last bound to; `null` when it is bound to none.
        public var account: String?
        /// Every account it is bound to (several under `--account-policy shared`), in binding order.
        public var accounts: [Binding]
        /// `Production` or `Sandbox`.
        public var environment: String
        /// When it was bought (its first transaction), RFC 3339.
        public var purchased: String
        /// ``State/granted`` or ``State/revoked``: whether its download tokens are honoured now.
        public var state: String
        /// Its transactions, oldest first: what was granted.
        public var grants: [Grant]
        /// Every revocation on file, oldest first, in force or lifted.
        public var revocations: [Revocation]
        /// What was sent to it (the delivery record).
        public var delivery: Delivery
        /// The answers to Apple's refund requests (`CONSUMPTION_REQUEST`) about it, oldest first.
        public var consumptionAnswers: [ConsumptionAnswer]

        public init(originalTransactionId: String, productId: String, pack: String?, account: String?, accounts: [Binding],
                    environment: String, purchased: String, state: String, grants: [Grant], revocations: [Revocation],
                    delivery: Delivery = Delivery(versions: []), consumptionAnswers: [ConsumptionAnswer] = []) {
            self.originalTransactionId = originalTransactionId
            self.productId = productId
            self.pack = pack
            self.account = account
            self.accounts = accounts
            self.environment = environment
            self.purchased = purchased
            self.state = state
            self.grants = grants
            self.revocations = revocations
            self.delivery = delivery
            self.consumptionAnswers = consumptionAnswers
        }

        private enum CodingKeys: String, CodingKey {
            case originalTransactionId, productId, pack, account, accounts, environment, purchased, state, grants, revocations, delivery
            case consumptionAnswers
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(originalTransactionId, forKey: .originalTransactionId)
            try container.encode(productId, forKey: .productId)
            try container.encode(pack, forKey: .pack)
            try container.encode(account, forKey: .account)
            try container.encode(accounts, forKey: .accounts)
            try container.encode(environment, forKey: .environment)
            try container.encode(purchased, forKey: .purchased)
            try container.encode(state, forKey: .state)
            try container.encode(grants, forKey: .grants)
            try container.encode(revocations, forKey: .revocations)
            try container.encode(delivery, forKey: .delivery)
            try container.encode(consumptionAnswers, forKey: .consumptionAnswers)
        }
    }

    /// What the delivery record holds of a purchase, per pack version sent to it.
    public struct Delivery: Sendable, Hashable, Codable {
        public var versions: [DeliveredVersion]

        public init(versions: [DeliveredVersion]) {
            self.versions = versions
        }
    }

    /// What one pack version was sent of.
    public struct DeliveredVersion: Sendable, Hashable, Codable {
        public var pack: String
        public var version: Int
        /// Chunks sent whole (a chunk counts once all its bytes went to this purchase's tokens).
        public var chunks: Int
        /// The version's chunks; `null` when its manifest is no longer on disk.
        public var totalChunks: Int?
        /// The bytes of the chunks sent whole.
        public var deliveredBytes: Int64
        /// The version's bytes (`downloadBytes`); `null` when its manifest is no longer on disk.
        public var totalBytes: Int64?
        /// Every byte sent, each counted once (pieces of chunks included).
        public var sentBytes: Int64
        /// Whether every chunk of the version was sent; `null` when the version is unknown.
        public var complete: Bool?
        /// When the first and the last bytes were recorded, and the last chunk completed (`null` before one did).
        public var firstSent: String
        public var lastSent: String
        public var lastDelivered: String?

        public init(pack: String, version: Int, chunks: Int, totalChunks: Int?, deliveredBytes: Int64, totalBytes: Int64?, sentBytes: Int64,
                    complete: Bool?, firstSent: String, lastSent: String, lastDelivered: String?) {
            self.pack = pack
            self.version = version
            self.chunks = chunks
            self.totalChunks = totalChunks
            self.deliveredBytes = deliveredBytes
            self.totalBytes = totalBytes
            self.sentBytes = sentBytes
            self.complete = complete
            self.firstSent = firstSent
            self.lastSent = lastSent
            self.lastDelivered = lastDelivered
        }

        private enum CodingKeys: String, CodingKey {
            case pack, version, chunks, totalChunks, deliveredBytes, totalBytes, sentBytes, complete, firstSent, lastSent, lastDelivered
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(pack, forKey: .pack)
            try container.encode(version, forKey: .version)
            try container.encode(chunks, forKey: .chunks)
            try container.encode(totalChunks, forKey: .totalChunks)
            try container.encode(deliveredBytes, forKey: .deliveredBytes)
            try container.encode(totalBytes, forKey: .totalBytes)
            try container.encode(sentBytes, forKey: .sentBytes)
            try container.encode(complete, forKey: .complete)
            try container.encode(firstSent, forKey: .firstSent)
            try container.encode(lastSent, forKey: .lastSent)
            try container.encode(lastDelivered, forKey: .lastDelivered)
        }
    }

    /// One answer to a `CONSUMPTION_REQUEST` (Send Consumption Information).
    public struct ConsumptionAnswer: Sendable, Hashable, Codable {
        /// The refund request's `notificationUUID`.
        public var notification: String
        /// The transaction the customer asked a refund for.
        public var transactionId: String
        /// `pending` (being tried), `sent` (Apple accepted it) or `abandoned` (12 hours passed, or Apple refused it).
        public var state: String
        public var attempts: Int
        /// When it was queued, and when it was sent or abandoned (`null` while pending), RFC 3339.
        public var queued: String
        public var finished: String?
        /// The answer Apple accepted (`null` unless `sent`): `DELIVERED`/`UNDELIVERED_OTHER`, milliunits, `DECLINE`/`GRANT_FULL`.
        public var deliveryStatus: String?
        public var consumptionPercentage: Int?
        public var refundPreference: String?
        /// The last failure, if any.
        public var lastError: String?

        public init(notification: String, transactionId: String, state: String, attempts: Int, queued: String, finished: String?,
                    deliveryStatus: String?, consumptionPercentage: Int?, refundPreference: String?, lastError: String?) {
            self.notification = notification
            self.transactionId = transactionId
            self.state = state
            self.attempts = attempts
            self.queued = queued
            self.finished = finished
            self.deliveryStatus = deliveryStatus
            self.consumptionPercentage = consumptionPercentage
            self.refundPreference = refundPreference
            self.lastError = lastError
        }

        private enum CodingKeys: String, CodingKey {
            case notification, transactionId, state, attempts, queued, finished, deliveryStatus, consumptionPercentage, refundPreference, lastError
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(notification, forKey: .notification)
            try container.encode(transactionId, forKey: .transactionId)
            try container.encode(state, forKey: .state)
            try container.encode(attempts, forKey: .attempts)
            try container.encode(queued, forKey: .queued)
            try container.encode(finished, forKey: .finished)
            try container.encode(deliveryStatus, forKey: .deliveryStatus)
            try container.encode(consumptionPercentage, forKey: .consumptionPercentage)
            try container.encode(refundPreference, forKey: .refundPreference)
            try container.encode(lastError, forKey: .lastError)
        }
    }

    /// An account binding.
    public struct Binding: Sendable, Hashable, Codable {
        public var account: String
        /// When the purchase was bound to it, RFC 3339.
        public var bound: String

        public init(account: String, bound: String) {
            self.account = account
            self.bound = bound
        }
    }

    /// One transaction of a purchase.
    public struct Grant: Sendable, Hashable, Codable {
        public var transactionId: String
        public var productId: String
        /// Its purchase date (a renewal's own), RFC 3339.
        public var purchased: String
        /// When its subscription period ends; `null` for other products.
        public var expires: String?
        /// `receipt` (verifyReceipt or the App Store Server API) or `jws` (a StoreKit 2 transaction).
        public var source: String
        /// When a revocation in force took it back; `null` otherwise.
        public var revoked: String?

        public init(transactionId: String, productId: String, purchased: String, expires: String?, source: String, revoked: String?) {
            self.transactionId = transactionId
            self.productId = productId
            self.purchased = purchased
            self.expires = expires
            self.source = source
            self.revoked = revoked
        }

        private enum CodingKeys: String, CodingKey { case transactionId, productId, purchased, expires, source, revoked }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(transactionId, forKey: .transactionId)
            try container.encode(productId, forKey: .productId)
            try container.encode(purchased, forKey: .purchased)
            try container.encode(expires, forKey: .expires)
            try container.encode(source, forKey: .source)
            try container.encode(revoked, forKey: .revoked)
        }
    }

    /// One revocation.
    public struct Revocation: Sendable, Hashable, Codable {
        /// When it took effect, RFC 3339.
        public var at: String
        /// `REFUND`, `REVOKE` (notifications), `receipt`/`jws` (purchase data carried the date), or `support`.
        public var reason: String
        /// `apple` or `admin` (a support decision).
        public var by: String
        /// The transaction it names; `null` for a support decision, which concerns the whole purchase.
        public var transactionId: String?
        /// When it was lifted (`REFUND_REVERSED` or a support restore); `null` while it is in force.
        public var restored: String?
        /// Who lifted it: `apple` or `admin`; `null` while in force (or lifted before the ledger recorded who).
        public var restoredBy: String?

        public init(at: String, reason: String, by: String, transactionId: String?, restored: String?, restoredBy: String? = nil) {
            self.at = at
            self.reason = reason
            self.by = by
            self.transactionId = transactionId
            self.restored = restored
            self.restoredBy = restoredBy
        }

        private enum CodingKeys: String, CodingKey { case at, reason, by, transactionId, restored, restoredBy }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(at, forKey: .at)
            try container.encode(reason, forKey: .reason)
            try container.encode(by, forKey: .by)
            try container.encode(transactionId, forKey: .transactionId)
            try container.encode(restored, forKey: .restored)
            try container.encode(restoredBy, forKey: .restoredBy)
        }
    }

    /// The values of ``Purchase/state``.
    public enum State {
        public static let granted = "granted"
        public static let revoked = "revoked"
    }

    public var purchases: [Purchase]
    /// The cursor of the next page (`?after=`), `null` on the last.
    public var next: String?

    public init(purchases: [Purchase], next: String?) {
        self.purchases = purchases
        self.next = next
    }

    private enum CodingKeys: String, CodingKey { case purchases, next }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(purchases, forKey: .purchases)
        try container.encode(next, forKey: .next)
    }
}
