public import DepotWire

/// Content-defined chunk boundaries (`pack-updates.md` §1): FastCDC (Xia et al., USENIX ATC 2016; IEEE TPDS
/// 2020) with normalized chunking, fed a file's bytes in any pieces, one file at a time.
///
/// For an average `A` (a chunk size in bytes), `min = A / 4`, `max = A × 4` and `b = round(log2 A)`:
/// - at the start of each chunk the 64-bit gear hash is 0; the first `min` bytes of a chunk are skipped
///   unhashed (cut-point skipping: no boundary can fall there);
/// - each later byte `x` updates it as `h = (h << 1) &+ G[x]` (``GearTable``), so `h` depends on the last
///   64 bytes only;
/// - while the chunk (this byte included) is shorter than `A`, the chunk ends after this byte when the
///   `b` highest bits of `h` are all zero; from `A` on, when its `b − 1` highest bits are (a looser test, twice
///   as likely): normalized chunking with a strict mask of `b` bits and a loose one of `b − 1`, which makes the
///   mean chunk `A` (1.01 A in theory, 0.95–1.05 A measured);
/// - a chunk that reaches `max` bytes ends there; a file's last chunk ends with the file.
///
/// Why these masks and not FastCDC's level 2 (`b + 2` / `b − 2`, used before 2026-12-02): after an insertion or
/// deletion the chunks that follow start elsewhere, so each is shorter than the old chunk it overlaps when it
/// reaches that chunk's old end; with level 2, four in five old ends passed the strict zone and were loose-only
/// cuts, which the shorter new chunk, still in its strict zone, skips, so the chunking took several chunks to
/// fall back onto the old boundaries. With `b` / `b − 1` half the chunks end in the strict zone and half the
/// loose cuts also pass the strict test. On the pack-updates benchmark's edits (simulated on eight random
/// 64 MiB files by `Tests/Benchmarks/chunking-variants.py`) an update fetches about a sixth less: a median of
/// 6.75 % of the full download against 8.09 % at 256 KiB, 2.94 % against 3.47 % at 64 KiB, with an eighth more
/// chunks (level 2's mean chunk was 1.14 A).
///
/// Identical bytes always give identical boundaries, and an edit moves only the boundaries up to the first
/// one after it that the edit does not touch (`h` forgets bytes older than 64).
public struct ContentChunker: Sendable {
    public let minimum: Int64
    public let average: Int64
    public let maximum: Int64
    /// Tested before the chunk reaches `average` bytes: more bits, fewer early cuts.
    package let strictMask: UInt64
    /// Tested from `average` bytes on: fewer bits, cuts come soon.
    package let looseMask: UInt64
    /// Bytes of the current chunk seen so far.
    private var length: Int64 = 0
    private var hash: UInt64 = 0

    /// The averages `--chunk-size` accepts for content chunking: `max = 4 × average` stays within the 1 GiB
    /// chunk limit, and `min = average / 4` keeps chunks at 256 bytes or more.
    public static let averageRange: ClosedRange<Int64> = 1024...(256 << 20)

    /// The default average: 256 KiB.
    public static let defaultAverage: Int64 = 256 << 10

    /// A chunker for `average` (within ``averageRange``).
    public init(average: Int64) {
        precondition(Self.averageRange.contains(average), "average chunk size outside \(Self.averageRange)")
        self.average = average
        minimum = average / 4
        maximum = average * 4
        let bits = Self.roundedLog2(average)
        strictMask = Self.highBits(bits)
        looseMask = Self.highBits(bits - 1)
    }

    /// The manifest's `"chunking"` for this chunker.
    public var chunking: PackChunking { .content(min: minimum, average: average, max: maximum) }

    /// log2(`value`) rounded to the nearest integer (in the log domain: `2^(b+½)` is the midpoint).
    package static func roundedLog2(_ value: Int64) -> Int {
        let floor = 63 - value.leadingZeroBitCount
        // value ≥ 2^(floor + ½)  ⇔  value² ≥ 2^(2·floor + 1); value ≤ 2^28 here, so value² fits.
        return value * value >= Int64(1) << Int64(2 * floor + 1) ? floor + 1 : floor
    }

    /// A mask of the `count` highest bits of a 64-bit word.
    static func highBits(_ count: Int) -> UInt64 { count <= 0 ? 0 : ~UInt64(0) << UInt64(64 - count) }

    /// Starts the next file (or drops a chunk in progress).
    public mutating func reset() {
        length = 0
        hash = 0
    }

    /// Looks for the end of the current chunk in `bytes[start...]`. Returns the index just past the chunk's
    /// last byte (the next chunk starts there, with a fresh state), or nil when the chunk goes on past the
    /// end of `bytes` (all of it was consumed). The end of a file ends its last chunk: the caller knows it.
    public mutating func boundary(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = bytes.count
        guard start < count, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var i = start
        if length < minimum {
            let skip = Int(min(minimum - length, Int64(count - i)))
            i += skip
            length += Int64(skip)
            if length < minimum { return nil }
        }
        var h = hash
        let found: Int? = GearTable.values.withUnsafeBufferPointer { gear -> Int? in
            let table = gear.baseAddress!
            // Strict part: lengths below the average.
            if length < average - 1 {
                let end = i + Int(min(average - 1 - length, Int64(count - i)))
                let mask = strictMask
                let from = i
                while i < end {
                    h = (h << 1) &+ table[Int(base[i])]
                    i += 1
                    if h & mask == 0 {
                        length += Int64(i - from)
                        return i
                    }
                }
                length += Int64(i - from)
                if length < average - 1 { return nil }
            }
            // Loose part: from the average up to the maximum.
            let end = i + Int(min(maximum - length, Int64(count - i)))
            let mask = looseMask
            let from = i
            while i < end {
                h = (h << 1) &+ table[Int(base[i])]
                i += 1
                if h & mask == 0 {
                    length += Int64(i - from)
                    return i
                }
            }
            length += Int64(i - from)
            return length >= maximum ? i : nil
        }
        if let found {
            reset()
            return found
        }
        hash = h
        return nil
    }

    /// Every chunk of `bytes` taken as one whole file: `(offset, length)` pairs tiling it (none when empty).
    public static func chunks(of bytes: UnsafeRawBufferPointer, average: Int64) -> [(offset: Int64, length: Int64)] {
        var chunker = ContentChunker(average: average)
        var result: [(Int64, Int64)] = []
        var start = 0
        while start < bytes.count {
            let end = chunker.boundary(in: bytes, from: start) ?? bytes.count
            result.append((Int64(start), Int64(end - start)))
            start = end
        }
        return result
    }
}
