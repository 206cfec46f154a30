/// Chunks that one `Ledger.recordDeliveries(_:)` call found newly delivered, per purchase and pack version
/// (the server checks those pack versions for completion).
public struct DeliveryProgress: Sendable, Hashable {
    /// The purchase (original transaction).
    public var originalTransactionID: String
    /// The pack ID.
    public var pack: String
    /// The pack version.
    public var version: Int
    /// How many chunks became delivered with this call.
    public var newChunks: Int

    /// A progress entry; see the properties.
    public init(originalTransactionID: String, pack: String, version: Int, newChunks: Int) {
        self.originalTransactionID = originalTransactionID
        self.pack = pack
        self.version = version
        self.newChunks = newChunks
    }
}

extension DeliveryProgress {
    /// Adds `count` new chunks of `span`'s pack version to `progress` (one entry per purchase and version).
    static func add(_ count: Int, for span: DeliverySpan, to progress: inout [DeliveryProgress]) {
        if let index = progress.firstIndex(where: {
            $0.originalTransactionID == span.originalTransactionID && $0.pack == span.pack && $0.version == span.version
        }) {
            progress[index].newChunks += count
        } else {
            progress.append(DeliveryProgress(originalTransactionID: span.originalTransactionID, pack: span.pack,
                                             version: span.version, newChunks: count))
        }
    }
}
