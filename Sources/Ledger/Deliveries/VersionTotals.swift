/// What one pack version holds in all (its manifest's chunks and their bytes), kept with the delivery record
/// so that a refund request can be judged after the version's directory was pruned (spec app-store-server-api §7).
public struct VersionTotals: Sendable, Equatable {
    /// The chunks of every file of the version.
    public var chunks: Int
    /// The bytes of those chunks.
    public var bytes: Int64

    /// Totals; see the properties.
    public init(chunks: Int, bytes: Int64) {
        self.chunks = chunks
        self.bytes = bytes
    }
}
