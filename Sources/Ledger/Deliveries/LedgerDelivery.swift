public import Foundation

/// What the ledger knows of one pack file sent to one purchase: the chunks delivered whole and the bytes
/// sent (delivered chunks and pieces of others, each byte once).
public struct LedgerDelivery: Sendable, Equatable {
    /// The purchase (original transaction).
    public var originalTransactionID: String
    /// The pack ID.
    public var pack: String
    /// The pack version.
    public var version: Int
    /// The file's path in the version.
    public var path: String
    /// The chunks sent whole, by offset.
    public var chunks: [DeliveredChunk]
    /// Every byte range sent (merged).
    public var sent: ByteCoverage
    /// When the first bytes were recorded.
    public var firstSent: Date
    /// When the last bytes were recorded.
    public var lastSent: Date
    /// The version's chunks and bytes in all, as recorded with the file (nil for a record written before they
    /// were kept: the version's manifest on disk has them, while it is there).
    public var versionTotals: VersionTotals?

    /// A delivery record; see the properties.
    public init(originalTransactionID: String, pack: String, version: Int, path: String, chunks: [DeliveredChunk],
                sent: ByteCoverage, firstSent: Date, lastSent: Date, versionTotals: VersionTotals? = nil) {
        self.originalTransactionID = originalTransactionID
        self.pack = pack
        self.version = version
        self.path = path
        self.chunks = chunks
        self.sent = sent
        self.firstSent = firstSent
        self.lastSent = lastSent
        self.versionTotals = versionTotals
    }

    /// The bytes of the chunks delivered whole.
    public var deliveredBytes: Int64 { chunks.reduce(0) { $0 + $1.length } }
}

extension LedgerDelivery {
    /// A key naming one file of one pack version (the stores group chunks by it).
    static func fileKey(pack: String, version: Int, path: String) -> String {
        "\(pack)\u{0}\(version)\u{0}\(path)"
    }

    /// A key naming one file of one pack version sent to the purchase `original` (the stores group the chunks
    /// of several purchases by it).
    static func fileKey(original: String, pack: String, version: Int, path: String) -> String {
        original + "\u{0}" + fileKey(pack: pack, version: version, path: path)
    }
}
