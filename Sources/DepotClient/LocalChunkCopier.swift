package import DepotWire
import Foundation

/// Copies chunks of an update from the installed version's files into the new version's, checking each one's
/// SHA-256 on the way, on the downloader's ``FileWorkQueue`` (file I/O never runs on Swift's cooperative threads).
package struct LocalChunkCopier: Sendable {
    /// One chunk to copy.
    package struct Copy: Sendable {
        /// The new version's file and chunk index.
        var path: String
        var index: Int
        var chunk: DownloadManifest.Chunk
        /// Where the installed version holds the same bytes.
        var sourcePath: String
        var sourceOffset: Int64

        /// Chunk `index` of the new version's `path`, whose bytes the installed version holds at `sourceOffset` of
        /// `sourcePath`.
        package init(path: String, index: Int, chunk: DownloadManifest.Chunk, sourcePath: String, sourceOffset: Int64) {
            self.path = path
            self.index = index
            self.chunk = chunk
            self.sourcePath = sourcePath
            self.sourceOffset = sourceOffset
        }
    }

    /// Bytes copied per batch (and per journal save).
    static let batchBytes: Int64 = 8 << 20

    let source: PackFileStore
    let target: PackFileStore
    let hasher: any ChunkHasher
    let work: FileWorkQueue

    /// A copier from the installed version's files (`source`) into the new version's (`target`), checking each chunk
    /// with `hasher`, on `work` (the downloader's file queue, so copies and its other file work keep their order).
    package init(source: PackFileStore, target: PackFileStore, hasher: any ChunkHasher, work: FileWorkQueue = FileWorkQueue()) {
        self.source = source
        self.target = target
        self.hasher = hasher
        self.work = work
    }

    /// Copies `batch`; true for each chunk whose bytes matched and were written, false for each to fetch instead
    /// (missing, short or different bytes in the installed file). Each file is opened once per batch, not once per
    /// chunk: with small content-defined chunks the opens and closes cost more than the copying.
    package func run(_ batch: [Copy]) async throws -> [Bool] {
        try await work.run { [source, target, hasher] in
            var readers: [String: FileHandle?] = [:]
            var writers: [String: FileHandle] = [:]
            defer {
                for case let handle? in readers.values { try? handle.close() }
                for handle in writers.values { try? handle.close() }
            }
            var results: [Bool] = []
            for copy in batch {
                if readers[copy.sourcePath] == nil { readers[copy.sourcePath] = .some(source.openForReading(copy.sourcePath)) }
                guard let reader = readers[copy.sourcePath] ?? nil,
                      let bytes = source.read(from: reader, at: copy.sourceOffset, length: copy.chunk.length),
                      try PackDownloader.hashMatches(bytes, sha256: copy.chunk.sha256, with: hasher) else {
                    results.append(false)
                    continue
                }
                let writer = try writers[copy.path] ?? target.openForWriting(copy.path)
                writers[copy.path] = writer
                try target.write(bytes, into: writer, at: copy.chunk.offset, path: copy.path)
                results.append(true)
            }
            return results
        }
    }
}
