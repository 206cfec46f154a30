import DepotWire

/// The body of Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{transactionId}`),
/// Depot's answer to a `CONSUMPTION_REQUEST` notification (spec §7).
public struct ConsumptionInformation: Sendable, Equatable {
    /// Whether the content was delivered (`deliveryStatus`).
    public struct DeliveryStatus: AppStoreWireValue {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Every chunk of the pack version was sent.
        public static let delivered = DeliveryStatus(rawValue: "DELIVERED")
        /// Not delivered because of a quality issue.
        public static let undeliveredQualityIssue = DeliveryStatus(rawValue: "UNDELIVERED_QUALITY_ISSUE")
        /// The wrong item was delivered.
        public static let undeliveredWrongItem = DeliveryStatus(rawValue: "UNDELIVERED_WRONG_ITEM")
        /// Not delivered because of a server outage.
        public static let undeliveredServerOutage = DeliveryStatus(rawValue: "UNDELIVERED_SERVER_OUTAGE")
        /// Not delivered for another reason (Depot's answer when not every chunk was sent).
        public static let undeliveredOther = DeliveryStatus(rawValue: "UNDELIVERED_OTHER")
    }

    /// What the developer prefers Apple to decide (`refundPreference`).
    public struct RefundPreference: AppStoreWireValue {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Decline the refund (everything was delivered).
        public static let decline = RefundPreference(rawValue: "DECLINE")
        /// Grant a full refund (nothing was delivered).
        public static let grantFull = RefundPreference(rawValue: "GRANT_FULL")
        /// Grant a prorated refund.
        public static let grantProrated = RefundPreference(rawValue: "GRANT_PRORATED")
    }

    /// The customer consented to sharing consumption data (Apple requires it; Depot sends `true`).
    public var customerConsented: Bool
    /// Whether a free sample was provided.
    public var sampleContentProvided: Bool
    /// Whether the content was delivered.
    public var deliveryStatus: DeliveryStatus
    /// Share of the content consumed, in milliunits (0–100000); nil leaves it out.
    public var consumptionPercentage: Int?
    /// The developer's preference; nil leaves it out.
    public var refundPreference: RefundPreference?

    /// A body with the given fields.
    public init(customerConsented: Bool = true, sampleContentProvided: Bool = false, deliveryStatus: DeliveryStatus,
                consumptionPercentage: Int? = nil, refundPreference: RefundPreference? = nil) {
        self.customerConsented = customerConsented
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }

    /// The JSON body, fields in the spec's order, absent ones left out.
    public var json: String {
        var fields = ["\"customerConsented\": \(customerConsented)", "\"sampleContentProvided\": \(sampleContentProvided)",
                      "\"deliveryStatus\": \(JSONText.string(deliveryStatus.rawValue))"]
        if let consumptionPercentage { fields.append("\"consumptionPercentage\": \(consumptionPercentage)") }
        if let refundPreference { fields.append("\"refundPreference\": \(JSONText.string(refundPreference.rawValue))") }
        return "{" + fields.joined(separator: ", ") + "}"
    }
}
