public import Foundation

/// What one purchase was sent of one pack version, over all its files (spec app-store-server-api §7): the
/// facts `depot purchases show` and the admin purchases API print. The version's totals (its chunks and
/// bytes) are the catalog's, not the ledger's.
public struct DeliverySummary: Sendable, Equatable {
    /// The pack ID.
    public var pack: String
    /// The pack version.
    public var version: Int
    /// Files of the version something was sent of.
    public var files: Int
    /// Chunks sent whole.
    public var chunks: Int
    /// The bytes of the chunks sent whole.
    public var deliveredBytes: Int64
    /// Every byte sent, each once (delivered chunks and pieces of others).
    public var sentBytes: Int64
    /// When the first bytes were recorded.
    public var firstSent: Date
    /// When the last bytes were recorded.
    public var lastSent: Date
    /// When the last chunk sent whole completed (nil before the first).
    public var lastDelivered: Date?

    /// A summary; see the properties.
    public init(pack: String, version: Int, files: Int, chunks: Int, deliveredBytes: Int64, sentBytes: Int64, firstSent: Date,
                lastSent: Date, lastDelivered: Date?) {
        self.pack = pack
        self.version = version
        self.files = files
        self.chunks = chunks
        self.deliveredBytes = deliveredBytes
        self.sentBytes = sentBytes
        self.firstSent = firstSent
        self.lastSent = lastSent
        self.lastDelivered = lastDelivered
    }

    /// The file records summed per pack version, by pack and version.
    public static func of(_ records: [LedgerDelivery]) -> [DeliverySummary] {
        var summaries: [String: DeliverySummary] = [:]
        for record in records {
            let key = LedgerDelivery.fileKey(pack: record.pack, version: record.version, path: "")
            let delivered = record.chunks.map(\.deliveredAt).max()
            if var summary = summaries[key] {
                summary.files += 1
                summary.chunks += record.chunks.count
                summary.deliveredBytes += record.deliveredBytes
                summary.sentBytes += record.sent.byteCount
                summary.firstSent = min(summary.firstSent, record.firstSent)
                summary.lastSent = max(summary.lastSent, record.lastSent)
                summary.lastDelivered = [summary.lastDelivered, delivered].compactMap { $0 }.max()
                summaries[key] = summary
            } else {
                summaries[key] = DeliverySummary(
                    pack: record.pack, version: record.version, files: 1, chunks: record.chunks.count,
                    deliveredBytes: record.deliveredBytes, sentBytes: record.sent.byteCount, firstSent: record.firstSent,
                    lastSent: record.lastSent, lastDelivered: delivered)
            }
        }
        return summaries.values.sorted { ($0.pack, $0.version) < ($1.pack, $1.version) }
    }
}
