public import Foundation

/// One answer to a `CONSUMPTION_REQUEST` as the ledger knows it (spec app-store-server-api §7): the request,
/// where its sending stands, and, once Apple accepted it, the answer sent.
public struct LedgerConsumptionAnswer: Sendable, Equatable {
    /// The fields of the answer Apple accepted (Send Consumption Information's body).
    public struct Sent: Sendable, Equatable, Decodable {
        /// `DELIVERED` or `UNDELIVERED_OTHER`.
        public var deliveryStatus: String
        /// The share of the pack's bytes sent, in milliunits; nil for a product without a pack.
        public var consumptionPercentage: Int?
        /// `DECLINE`, `GRANT_FULL`, or nil.
        public var refundPreference: String?
        /// Always true (the operator stated the customer's consent with `--consumption-info on`).
        public var customerConsented: Bool
        /// Always false.
        public var sampleContentProvided: Bool

        /// The fields as given.
        package init(deliveryStatus: String, consumptionPercentage: Int?, refundPreference: String?, customerConsented: Bool,
                     sampleContentProvided: Bool) {
            self.deliveryStatus = deliveryStatus
            self.consumptionPercentage = consumptionPercentage
            self.refundPreference = refundPreference
            self.customerConsented = customerConsented
            self.sampleContentProvided = sampleContentProvided
        }
    }

    /// The request answered.
    public var request: ConsumptionRequest
    /// `pending` (being tried), `sent` (Apple accepted it) or `abandoned` (12 hours passed, or Apple refused it).
    public var state: OutboxState
    /// Attempts so far.
    public var attempts: Int
    /// When it was queued (the notification was acknowledged after that).
    public var queued: Date
    /// When it was sent or abandoned.
    public var finished: Date?
    /// The last failure, if any.
    public var lastError: String?
    /// The answer Apple accepted (state `sent`).
    public var sent: Sent?

    /// The answer an outbox item of the consumption queue describes; nil for anything else.
    public init?(_ item: OutboxItem) {
        guard item.entry.queue == .consumption, let request = ConsumptionRequest(payload: item.entry.payload) else { return nil }
        self.request = request
        state = item.state
        attempts = item.attempts
        queued = item.entry.created
        finished = item.finished
        lastError = item.lastError
        sent = item.outcome.flatMap { try? JSONDecoder().decode(Sent.self, from: Data($0.utf8)) }
    }
}
