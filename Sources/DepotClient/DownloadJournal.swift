import Foundation

/// The progress of a pack download, kept as `<destination>/.depot-download.json` so a new process resumes where the
/// last one stopped.
///
/// Saved atomically (a temporary file renamed over it, after the chunks' bytes are written; those bytes are never
/// `fsync`ed, while Foundation's `Data.write` on Linux does `fsync` the journal's temporary before the rename), but
/// not after every verified chunk: while chunks are fetched, after a written run of chunks once 8 MiB have been
/// verified since the last save or a quarter second has passed (``PackDownloader/journalSaveBytes``), and once
/// more, if anything verified is unsaved, when the fetching stops for any reason (all fetched, pause, cancel, an
/// error, a changed file); during an update, after each batch of about 8 MiB of copied chunks
/// (``LocalChunkCopier/batchBytes``); and at the end, marked complete. A process killed between two saves loses
/// only what it verified since the last one: the next run fetches (or copies) those chunks again.
///
/// ```json
/// {"format": 1, "pack": "level2", "version": 3, "completed": false,
///  "files": {"stages.bin": {"etag": "\"…\"", "size": 5242880, "chunkLength": 1048576, "verified": [0, 1]}}}
/// ```
package struct DownloadJournal: Codable, Equatable, Sendable {
    /// What is known about one file.
    package struct FileRecord: Codable, Equatable, Sendable {
        var etag: String
        var size: Int64
        /// The length of the first chunk: chunk indices mean nothing under another chunk size.
        var chunkLength: Int64
        /// Indices of the chunks whose bytes are on disk and matched their SHA-256.
        package var verified: Set<Int>

        /// A record of `file` with no chunk verified yet.
        package init(_ file: DownloadManifest.File) {
            etag = file.etag
            size = file.size
            chunkLength = file.chunks.first?.length ?? 0
            verified = []
        }

        /// True when this record still describes `file`: same content (strong ETag), size and chunking.
        func matches(_ file: DownloadManifest.File) -> Bool {
            etag == file.etag && size == file.size && chunkLength == (file.chunks.first?.length ?? 0)
        }

        private enum CodingKeys: String, CodingKey { case etag, size, chunkLength, verified }

        /// Reads a record (`verified` as a list).
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            etag = try container.decode(String.self, forKey: .etag)
            size = try container.decode(Int64.self, forKey: .size)
            chunkLength = try container.decode(Int64.self, forKey: .chunkLength)
            verified = Set(try container.decode([Int].self, forKey: .verified))
        }

        /// Writes a record, `verified` as a sorted list.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(etag, forKey: .etag)
            try container.encode(size, forKey: .size)
            try container.encode(chunkLength, forKey: .chunkLength)
            try container.encode(verified.sorted(), forKey: .verified)
        }
    }

    var format = 1
    var pack: String
    /// The pack version the journal describes.
    package var version: Int
    /// Whether the download finished.
    package var completed = false
    /// Each file's record, by manifest path.
    package var files: [String: FileRecord] = [:]

    /// An empty journal of a pack version.
    package init(pack: String, version: Int) {
        self.pack = pack
        self.version = version
    }

    /// The journal carried over to `manifest`: a file keeps its verified chunks only if it is unchanged;
    /// `restarted` lists changed files that had verified bytes on disk (now stale), `dropped` files no
    /// longer in the pack.
    package func adopting(_ manifest: DownloadManifest) -> (journal: DownloadJournal, restarted: [String], dropped: [String]) {
        var next = DownloadJournal(pack: manifest.pack, version: manifest.version)
        var restarted: [String] = []
        for file in manifest.files {
            if let record = files[file.path] {
                if record.matches(file) {
                    var kept = record
                    kept.verified = record.verified.filter { $0 >= 0 && $0 < file.chunks.count }
                    next.files[file.path] = kept
                    continue
                }
                if !record.verified.isEmpty { restarted.append(file.path) }
            }
            next.files[file.path] = FileRecord(file)
        }
        let dropped = files.keys.filter { next.files[$0] == nil }.sorted()
        return (next, restarted, dropped)
    }

    /// Bytes of verified chunks under `manifest`.
    package func verifiedBytes(_ manifest: DownloadManifest) -> Int64 {
        manifest.files.reduce(0) { total, file in
            let verified = files[file.path]?.verified ?? []
            return total + verified.reduce(0) { $0 + file.chunks[$1].length }
        }
    }

    func isVerified(_ path: String, chunk: Int) -> Bool { files[path]?.verified.contains(chunk) ?? false }
}
