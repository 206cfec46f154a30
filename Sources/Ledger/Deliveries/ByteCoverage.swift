/// The bytes of one file sent to one purchase: sorted, merged, non-empty ranges (end exclusive).
///
/// A chunk counts as delivered once one range covers it whole, whichever responses its bytes came in (a
/// download resumed inside a chunk sends it in two pieces). `insert` keeps every range; what is stored is
/// bounded by `trim(keeping:)`, which the delivery record calls only after crediting the chunks the whole set
/// covers: beyond `maximumRanges` separate pieces (a client asking for scattered single bytes) the shortest
/// are forgotten, those covering no chunk whole first, so a delivered chunk is never lost (it is recorded by
/// then); only pieces that might later have joined others lose their credit.
public struct ByteCoverage: Sendable, Equatable {
    /// The most separate ranges one file keeps.
    public static let maximumRanges = 1_024

    /// The ranges, sorted, merged (touching ranges are joined) and non-empty.
    public private(set) var ranges: [Range<Int64>]

    /// Coverage of `ranges` (in any order, overlapping or touching).
    public init(_ ranges: [Range<Int64>] = []) {
        self.ranges = []
        for range in ranges { insert(range) }
    }

    /// Adds `range` (empty and negative ranges are ignored).
    public mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty, range.lowerBound >= 0 else { return }
        // The first range that ends at or after the new one's start may touch it.
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var merged = range
        var end = low
        while end < ranges.count, ranges[end].lowerBound <= merged.upperBound {
            merged = min(merged.lowerBound, ranges[end].lowerBound)..<max(merged.upperBound, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(low..<end, with: [merged])
    }

    /// Forgets ranges until at most `maximum` are left: the shortest of those that cover none of `chunks` whole
    /// first, then the shortest of the rest. Call after the chunks covered were credited.
    public mutating func trim(to maximum: Int = maximumRanges, keeping chunks: [Range<Int64>] = []) {
        let excess = ranges.count - max(0, maximum)
        guard excess > 0 else { return }
        let sorted = chunks.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        let holdsChunk = ranges.map { range -> Bool in
            // The first chunk starting in the range fits in it, or no chunk does (chunks do not overlap).
            var low = 0, high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle].lowerBound < range.lowerBound { low = middle + 1 } else { high = middle }
            }
            return low < sorted.count && sorted[low].upperBound <= range.upperBound
        }
        let order = ranges.indices.sorted { a, b in
            holdsChunk[a] != holdsChunk[b] ? !holdsChunk[a] : ranges[a].count < ranges[b].count
        }
        let dropped = Set(order.prefix(excess))
        ranges = ranges.indices.filter { !dropped.contains($0) }.map { ranges[$0] }
    }

    /// Adds every range of `other`.
    public mutating func formUnion(_ other: ByteCoverage) {
        for range in other.ranges { insert(range) }
    }

    /// Whether every byte of `range` is covered (an empty range is).
    public func covers(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound <= range.lowerBound { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].lowerBound <= range.lowerBound && ranges[low].upperBound >= range.upperBound
    }

    /// The chunks of `chunks` that are covered whole.
    public func coveredChunks(_ chunks: [Range<Int64>]) -> [Range<Int64>] {
        chunks.filter { !$0.isEmpty && covers($0) }
    }

    /// The chunks of `chunks` covered whole here but not in `before` (the coverage this one grew from): what
    /// a write that took `before` to this coverage completed.
    public func newlyCoveredChunks(_ chunks: [Range<Int64>], before: ByteCoverage) -> [Range<Int64>] {
        chunks.filter { !$0.isEmpty && covers($0) && !before.covers($0) }
    }

    /// The number of bytes covered.
    public var byteCount: Int64 { ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }

    /// Whether nothing is covered.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The stored form: `start-end` pairs (end exclusive) joined by commas; empty for no coverage.
    public var encoded: String {
        ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
    }

    /// Parses `encoded`; nil when it is not that form.
    public init?(encoded: String) {
        var ranges: [Range<Int64>] = []
        if !encoded.isEmpty {
            for pair in encoded.split(separator: ",", omittingEmptySubsequences: false) {
                let bounds = pair.split(separator: "-", omittingEmptySubsequences: false)
                guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start >= 0, start < end else {
                    return nil
                }
                ranges.append(start..<end)
            }
        }
        self.init(ranges)
    }
}
