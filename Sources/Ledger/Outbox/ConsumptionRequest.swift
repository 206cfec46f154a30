public import Foundation

/// A verified `CONSUMPTION_REQUEST` as the consumption queue holds it (spec app-store-server-api §7): what the
/// answer is about, queued once per notification (`notificationUUID`).
public struct ConsumptionRequest: Sendable, Equatable, Codable {
    /// The notification's `notificationUUID` (the queue key: a redelivered notification queues nothing).
    public var notificationUUID: String
    /// The transaction the customer asked a refund for (the answer's URL names it).
    public var transactionId: String
    /// Its original transaction (the purchase whose delivery record decides).
    public var originalTransactionId: String
    /// The App Store product.
    public var productId: String
    /// `Production` or `Sandbox` (where the answer goes).
    public var environment: String
    /// The notification's `signedDate`, milliseconds: answers are tried until 12 hours after it.
    public var signedDate: Int64

    /// A request; see the properties.
    public init(notificationUUID: String, transactionId: String, originalTransactionId: String, productId: String,
                environment: String, signedDate: Int64) {
        self.notificationUUID = notificationUUID
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.environment = environment
        self.signedDate = signedDate
    }

    /// How long after `signedDate` an answer is still tried (12 hours).
    public static let answerWindow: Double = 12 * 3600

    /// The outbox key of the request.
    public var key: String { "consumption:" + notificationUUID }

    /// The request as its queue holds it (JSON).
    public var payload: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The request read back from its queue's payload; nil when it is not one.
    public init?(payload: String) {
        guard let decoded = try? JSONDecoder().decode(ConsumptionRequest.self, from: Data(payload.utf8)) else { return nil }
        self = decoded
    }

    /// The outbox entry queueing it at `now`, ordered per purchase, until 12 hours after `signedDate`.
    public func entry(now: Date) -> OutboxEntry {
        OutboxEntry(queue: .consumption, key: key, orderingKey: originalTransactionId, payload: payload, created: now,
                    deadline: LedgerTime.date(signedDate).addingTimeInterval(Self.answerWindow))
    }
}
