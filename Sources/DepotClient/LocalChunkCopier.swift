import DepotWire
import Foundation

/// Copies chunks of an update from the installed version's files into the new version's, checking each one's
/// SHA-256 on the way, on a queue of its own (file I/O never runs on Swift's cooperative threads).
struct LocalChunkCopier: Sendable {
    /// One chunk to copy.
    struct Copy: Sendable {
        /// The new version's file and chunk index.
        var path: String
        var index: Int
        var chunk: DownloadManifest.Chunk
        /// Where the installed version holds the same bytes.
        var sourcePath: String
        var sourceOffset: Int64
    }

    /// Bytes copied per batch (and per journal save).
    static let batchBytes: Int64 = 8 << 20

    let source: PackFileStore
    let target: PackFileStore
    let hasher: any ChunkHasher

    private static let queue = DispatchQueue(label: "depot.client.copy", qos: .utility)

    /// Copies `batch`; true for each chunk whose bytes matched and were written, false for each to fetch instead
    /// (missing, short or different bytes in the installed file).
    func run(_ batch: [Copy]) async throws -> [Bool] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Bool], any Error>) in
            Self.queue.async {
                do {
                    var results: [Bool] = []
                    for copy in batch {
                        guard let bytes = source.read(copy.sourcePath, at: copy.sourceOffset, length: copy.chunk.length),
                              try PackDownloader.hexDigest(bytes, with: hasher) == copy.chunk.sha256.lowercased() else {
                            results.append(false)
                            continue
                        }
                        try target.write(bytes, to: copy.path, at: copy.chunk.offset)
                        results.append(true)
                    }
                    continuation.resume(returning: results)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
