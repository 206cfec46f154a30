/// One webhook event as Depot POSTs it to the studio's backend (spec app-store-server-api §8):
/// `{"id": "<unique>", "type": "...", "created": "<ISO 8601>", "data": {...}}`, signed in the
/// `Depot-Signature` header. A receiver may see an event more than once (delivery is at least once): `id`
/// tells repeats apart.
public struct WebhookEvent: Sendable, Hashable, Codable {
    /// Unique per event (`evt_` and 32 hex digits).
    public var id: String
    /// One of ``WebhookEventType``'s raw values.
    public var type: String
    /// When the change happened (RFC 3339, UTC, whole seconds).
    public var created: String
    /// The change.
    public var data: WebhookEventData

    public init(id: String, type: String, created: String, data: WebhookEventData) {
        self.id = id
        self.type = type
        self.created = created
        self.data = data
    }
}

/// The event types.
public enum WebhookEventType: String, Sendable, CaseIterable {
    /// A purchase was recorded and released its pack (first validation, or a binding to another account).
    case purchaseGranted = "purchase.granted"
    /// Access was cut off: a refund or revocation from Apple (`by`: `apple`) or support (`by`: `admin`).
    case purchaseRevoked = "purchase.revoked"
    /// Access came back: `REFUND_REVERSED` (`apple`) or support (`admin`).
    case purchaseRestored = "purchase.restored"
    /// Every chunk of a pack version has been sent to the purchase.
    case packDelivered = "pack.delivered"
    /// Apple accepted Depot's answer to a `CONSUMPTION_REQUEST`.
    case consumptionSent = "consumption.sent"
    /// A pack version went live.
    case packPublished = "pack.published"
}

/// What an event is about; each type fills the fields that apply to it (absent fields are left out).
public struct WebhookEventData: Sendable, Hashable, Codable {
    /// The purchase (original transaction).
    public var originalTransactionId: String?
    /// The transaction the change names (a refunded renewal, the one a consumption answer was about).
    public var transactionId: String?
    /// The App Store product.
    public var productId: String?
    /// The pack ID.
    public var pack: String?
    /// The pack version.
    public var version: Int?
    /// The app account the purchase is bound to, when there is one.
    public var account: String?
    /// Who decided a revocation or restore: `apple` or `admin`.
    public var by: String?
    /// Apple's notification type, or `support` for an admin decision.
    public var reason: String?
    /// Chunks of the pack version (`pack.delivered`) or files (`pack.published`).
    public var chunks: Int?
    /// Bytes of the pack version.
    public var bytes: Int64?
    /// The answer sent to Apple (`consumption.sent`).
    public var deliveryStatus: String?
    /// The share of the pack's bytes sent, in milliunits (`consumption.sent`; absent without a pack).
    public var consumptionPercentage: Int?
    /// `DECLINE`, `GRANT_FULL`, or absent (`consumption.sent`).
    public var refundPreference: String?

    public init(originalTransactionId: String? = nil, transactionId: String? = nil, productId: String? = nil,
                pack: String? = nil, version: Int? = nil, account: String? = nil, by: String? = nil, reason: String? = nil,
                chunks: Int? = nil, bytes: Int64? = nil, deliveryStatus: String? = nil, consumptionPercentage: Int? = nil,
                refundPreference: String? = nil) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.pack = pack
        self.version = version
        self.account = account
        self.by = by
        self.reason = reason
        self.chunks = chunks
        self.bytes = bytes
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}
