/// How Depot answers a `CONSUMPTION_REQUEST` from what it delivered (spec app-store-server-api §7).
public enum ConsumptionRules {
    /// What was delivered of one pack version to one purchase: chunks sent whole and their bytes, against
    /// the version's totals.
    public struct Delivery: Sendable, Equatable {
        public var deliveredChunks: Int
        public var totalChunks: Int
        public var deliveredBytes: Int64
        public var totalBytes: Int64

        public init(deliveredChunks: Int, totalChunks: Int, deliveredBytes: Int64, totalBytes: Int64) {
            self.deliveredChunks = deliveredChunks
            self.totalChunks = totalChunks
            self.deliveredBytes = deliveredBytes
            self.totalBytes = totalBytes
        }

        /// Every chunk was sent (a version without chunks counts as delivered).
        public var isComplete: Bool { deliveredChunks >= totalChunks }

        /// The share of the version's bytes delivered, in milliunits (0–100000, rounded down: 100000 only
        /// when complete).
        public var milliunits: Int {
            guard totalBytes > 0 else { return isComplete ? 100_000 : 0 }
            if isComplete { return 100_000 }
            let share = Double(max(0, min(deliveredBytes, totalBytes))) / Double(totalBytes)
            return min(99_999, Int((share * 100_000).rounded(.down)))
        }
    }

    /// The answer: `delivery` is the pack version the purchase got most of (nil for a product without a pack).
    ///
    /// - `deliveryStatus`: `DELIVERED` when every chunk was sent, else `UNDELIVERED_OTHER` (nothing is claimed
    ///   about content Depot did not serve; a product without a pack is `UNDELIVERED_OTHER`);
    /// - `consumptionPercentage`: the share of the pack's bytes sent, in milliunits; absent without a pack;
    /// - `refundPreference`: `DECLINE` when everything was delivered, `GRANT_FULL` when nothing was, else
    ///   absent (and absent without a pack: Depot knows nothing of such a product's use).
    public static func answer(for delivery: Delivery?) -> ConsumptionInformation {
        guard let delivery else {
            return ConsumptionInformation(deliveryStatus: .undeliveredOther)
        }
        let preference: ConsumptionInformation.RefundPreference?
        if delivery.isComplete {
            preference = .decline
        } else if delivery.deliveredChunks == 0 {
            preference = .grantFull
        } else {
            preference = nil
        }
        return ConsumptionInformation(
            customerConsented: true, sampleContentProvided: false,
            deliveryStatus: delivery.isComplete ? .delivered : .undeliveredOther,
            consumptionPercentage: delivery.milliunits, refundPreference: preference)
    }

    /// Of several versions delivered in part, the one that decides: the most complete (by share of bytes),
    /// the newest among equals. `versions` maps a version number to its delivery.
    public static func decisive(_ versions: [Int: Delivery]) -> Delivery? {
        versions.max { left, right in
            let (a, b) = (left.value, right.value)
            if a.isComplete != b.isComplete { return !a.isComplete }
            if a.milliunits != b.milliunits { return a.milliunits < b.milliunits }
            return left.key < right.key
        }?.value
    }
}
