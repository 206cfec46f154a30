package import DepotWire
import Foundation

/// What a completed download keeps of the version it installed: every file's path and size and its chunks (offset,
/// length, SHA-256), as `<destination>/.depot-download.json.manifest` beside the journal (a name the manifest path
/// rules reserve, like the journal's temporary). When the server can no longer compute a delta from that version
/// (`"delta": null`, or no `delta`: the version was pruned), an update computes the reuse from this file instead
/// (``PackDownloader/fetchDelta(version:from:)``), so it still copies what the device holds.
///
/// Written atomically (a temporary of its own, renamed over it) before the journal is marked complete, in the
/// directory the version was assembled in: after an update's switch the new version's file is in the destination and
/// the old one's goes with the old directory. Never trusted blindly: it is used only when it decodes, names only safe
/// paths, its chunks tile every file, and it describes exactly the pack, version, files and sizes the complete journal
/// beside it records; and every chunk copied on its word is checked against the new manifest's SHA-256 anyway (a
/// mismatch is fetched).
///
/// ```json
/// {"format": 1, "pack": "level2", "version": 3,
///  "files": [{"path": "stages.bin", "size": 5242880, "chunks": [{"offset": 0, "length": 301233, "sha256": "…"}, …]}]}
/// ```
package struct InstalledManifest: Codable, Equatable, Sendable {
    /// One installed file.
    package struct File: Codable, Equatable, Sendable {
        package var path: String
        package var size: Int64
        /// In order, covering the file exactly (without `reuse`).
        package var chunks: [PackManifest.Chunk]
    }

    /// Where the installed version holds a chunk's bytes, by the chunk's SHA-256 (lower-case hex) and length.
    package typealias Index = [ChunkKey: PackManifest.Chunk.Reuse]

    /// A chunk's identity for reuse: the same SHA-256 and the same length (`pack-updates.md` §2).
    package struct ChunkKey: Hashable, Sendable {
        var sha256: String
        var length: Int64

        init(_ chunk: PackManifest.Chunk) {
            sha256 = chunk.sha256.lowercased()
            length = chunk.length
        }
    }

    var format = 1
    package var pack: String
    package var version: Int
    package var files: [File]

    /// What to keep of `manifest`, the version just installed.
    package init(_ manifest: DownloadManifest) {
        pack = manifest.pack
        version = manifest.version
        files = manifest.files.map { file in
            File(path: file.path, size: file.size,
                 chunks: file.chunks.map { PackManifest.Chunk(offset: $0.offset, length: $0.length, sha256: $0.sha256) })
        }
    }

    /// True when this describes the version `journal` records as installed: complete, same pack and version, the
    /// same files with the same sizes and first chunk lengths, safe paths, and chunks (hex SHA-256) tiling each file.
    package func describes(_ journal: DownloadJournal) -> Bool {
        guard format == 1, journal.completed, pack == journal.pack, version == journal.version,
              files.count == journal.files.count, Set(files.map(\.path)).count == files.count else { return false }
        for file in files {
            guard let record = journal.files[file.path], record.size == file.size,
                  record.chunkLength == (file.chunks.first?.length ?? 0),
                  (try? ManifestPath.check(file.path, reserved: PackDownloadOptions.journalFileName)) != nil else { return false }
            var expected: Int64 = 0
            for chunk in file.chunks {
                guard chunk.offset == expected, chunk.length > 0, chunk.length <= PackManifest.maxChunkSize,
                      ManifestPath.isSHA256Hex(chunk.sha256) else { return false }
                expected += chunk.length
            }
            guard expected == file.size else { return false }
        }
        return true
    }

    /// Every distinct chunk of the installed version and the first place (in manifest order) that holds it.
    package func index() -> Index {
        var index: Index = [:]
        for file in files {
            for chunk in file.chunks where index[ChunkKey(chunk)] == nil {
                index[ChunkKey(chunk)] = PackManifest.Chunk.Reuse(path: file.path, offset: chunk.offset)
            }
        }
        return index
    }
}

extension PackManifest {
    /// This manifest with each chunk whose bytes (same SHA-256 and length) `index` holds marked `reuse`, and
    /// `delta` set to the figures of that, from the installed version `from`: what the server's `?from=` answer
    /// would have said had it still had that version.
    package func markingReuse(_ index: InstalledManifest.Index, from: Int) -> PackManifest {
        var marked = self
        var reuseBytes: Int64 = 0
        for (fileIndex, file) in files.enumerated() {
            for (chunkIndex, chunk) in file.chunks.enumerated() {
                guard let reuse = chunk.reuse ?? index[InstalledManifest.ChunkKey(chunk)] else { continue }
                marked.files[fileIndex].chunks[chunkIndex].reuse = reuse
                reuseBytes += chunk.length
            }
        }
        marked.delta = .summary(PackDelta.Summary(from: from, reuseBytes: reuseBytes, fetchBytes: downloadBytes - reuseBytes))
        return marked
    }
}
