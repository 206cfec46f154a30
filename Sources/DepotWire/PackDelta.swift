/// `"delta"` of a manifest fetched with `?from=old` (`pack-updates.md` §2): what an installed version `old`
/// already holds. `unavailable` (`null`) when `old` is not a version that still has its manifest.
public enum PackDelta: Sendable, Hashable, Codable {
    /// The figures of a delta: `reuseBytes + fetchBytes == downloadBytes`.
    public struct Summary: Sendable, Hashable, Codable {
        /// The installed version the delta is computed from.
        public var from: Int
        /// Bytes of chunks marked `reuse` (copied from the installed version).
        public var reuseBytes: Int64
        /// Bytes of the other chunks (to download).
        public var fetchBytes: Int64

        public init(from: Int, reuseBytes: Int64, fetchBytes: Int64) {
            self.from = from
            self.reuseBytes = reuseBytes
            self.fetchBytes = fetchBytes
        }
    }

    case unavailable
    case summary(Summary)

    /// The figures, when the delta could be computed.
    public var summary: Summary? {
        if case .summary(let summary) = self { return summary }
        return nil
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .unavailable : .summary(try container.decode(Summary.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .unavailable: try container.encodeNil()
        case .summary(let summary): try container.encode(summary)
        }
    }
}
