public import ArgumentParsing
public import DepotWire
import DepotCore

/// How `depot publish --chunking` and the admin publish body's `"chunking"` cut files (`pack-updates.md` §1).
public enum ChunkingMethod: String, CaseIterable, Sendable, EnumeratedOption {
    /// Content-defined boundaries (``ContentChunker``); the chunk size is the average (default 256 KiB).
    case content
    /// Every chunk the chunk size (default 1 MiB) except a file's last.
    case fixed

    /// The chunk size used when none is given.
    public var defaultChunkSize: Int64 {
        switch self {
        case .content: ContentChunker.defaultAverage
        case .fixed: PackManifest.defaultChunkSize
        }
    }

    /// The sizes this method accepts: an average whose maximum (× 4) stays within 1 GiB, or a fixed size of
    /// 1 KiB to 1 GiB.
    public var chunkSizeRange: ClosedRange<Int64> {
        switch self {
        case .content: ContentChunker.averageRange
        case .fixed: 1024...(1 << 30)
        }
    }

    /// The manifest's `"chunking"` for `size` (within ``chunkSizeRange``).
    public func chunking(size: Int64) -> PackChunking {
        switch self {
        case .content: ContentChunker(average: size).chunking
        case .fixed: .fixed(size: size)
        }
    }
}
