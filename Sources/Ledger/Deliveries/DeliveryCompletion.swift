/// A purchase that now has every chunk of a pack version (spec app-store-server-api §8, `pack.delivered`), as
/// the delivery record's write that completed it found it.
public struct DeliveryCompletion: Sendable, Equatable {
    /// The purchase (original transaction).
    public var originalTransactionID: String
    /// The pack ID.
    public var pack: String
    /// The pack version.
    public var version: Int
    /// The version's chunks (all delivered).
    public var chunks: Int
    /// The bytes of the chunks delivered.
    public var bytes: Int64

    /// A completion; see the properties.
    public init(originalTransactionID: String, pack: String, version: Int, chunks: Int, bytes: Int64) {
        self.originalTransactionID = originalTransactionID
        self.pack = pack
        self.version = version
        self.chunks = chunks
        self.bytes = bytes
    }
}

/// Turns a delivery completion into the outbox entry that announces it (queued in the write that completed it),
/// or nil for none.
public typealias DeliveryEvents = @Sendable (DeliveryCompletion) -> OutboxEntry?

extension DeliveryCompletion {
    /// The completions among `progress` (the versions `spans` newly delivered chunks of): a version whose totals
    /// the spans carry and whose delivered chunks, `delivered(purchase, pack, version)` (count and bytes, read in
    /// the write's transaction), reach them.
    static func found<Failure: Error>(in progress: [DeliveryProgress], spans: [DeliverySpan],
                                      delivered: (String, String, Int) throws(Failure) -> (chunks: Int, bytes: Int64)) throws(Failure)
        -> [DeliveryCompletion] {
        var completions: [DeliveryCompletion] = []
        for entry in progress where entry.newChunks > 0 {
            guard let totals = spans.first(where: {
                $0.originalTransactionID == entry.originalTransactionID && $0.pack == entry.pack && $0.version == entry.version
                    && $0.versionTotals != nil
            })?.versionTotals, totals.chunks > 0 else { continue }
            let sent = try delivered(entry.originalTransactionID, entry.pack, entry.version)
            guard sent.chunks >= totals.chunks else { continue }
            completions.append(DeliveryCompletion(originalTransactionID: entry.originalTransactionID, pack: entry.pack,
                                                  version: entry.version, chunks: totals.chunks, bytes: sent.bytes))
        }
        return completions
    }
}
