public import Foundation

/// Bytes of one pack file sent to one purchase's tokens, as the server gathered them over a batch: the unit
/// `Ledger.recordDeliveries(_:)` merges into the delivery record (spec app-store-server-api §7).
public struct DeliverySpan: Sendable, Equatable {
    /// The purchase (original transaction) the token belonged to.
    public var originalTransactionID: String
    /// The pack ID.
    public var pack: String
    /// The pack version.
    public var version: Int
    /// The file's path in the version.
    public var path: String
    /// The bytes sent in this batch.
    public var sent: ByteCoverage
    /// The file's chunks, in order (from the version's manifest): a chunk is delivered once the merged record
    /// covers it whole.
    public var chunks: [Range<Int64>]
    /// When the last of these bytes was sent.
    public var sentAt: Date
    /// The whole version's chunks and bytes (from its manifest), stored with the record; nil when unknown.
    public var versionTotals: VersionTotals?

    /// A span; see the properties.
    public init(originalTransactionID: String, pack: String, version: Int, path: String, sent: ByteCoverage,
                chunks: [Range<Int64>], sentAt: Date, versionTotals: VersionTotals? = nil) {
        self.originalTransactionID = originalTransactionID
        self.pack = pack
        self.version = version
        self.path = path
        self.sent = sent
        self.chunks = chunks
        self.sentAt = sentAt
        self.versionTotals = versionTotals
    }
}
