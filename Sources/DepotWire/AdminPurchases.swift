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

        public init(originalTransactionId: String, productId: String, pack: String?, account: String?, accounts: [Binding],
                    environment: String, purchased: String, state: String, grants: [Grant], revocations: [Revocation]) {
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
        }

        private enum CodingKeys: String, CodingKey {
            case originalTransactionId, productId, pack, account, accounts, environment, purchased, state, grants, revocations
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

        public init(at: String, reason: String, by: String, transactionId: String?, restored: String?) {
            self.at = at
            self.reason = reason
            self.by = by
            self.transactionId = transactionId
            self.restored = restored
        }

        private enum CodingKeys: String, CodingKey { case at, reason, by, transactionId, restored }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(at, forKey: .at)
            try container.encode(reason, forKey: .reason)
            try container.encode(by, forKey: .by)
            try container.encode(transactionId, forKey: .transactionId)
            try container.encode(restored, forKey: .restored)
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
