import Foundation

/// A pack version's manifest as the server sends it (`GET /v1/packs/{pack}/{version}/manifest`, spec §4.4):
/// every file with its size, SHA-256, strong ETag, URL and chunk hashes.
public struct DownloadManifest: Sendable, Hashable, Codable {
    /// One chunk of a file: bytes `[offset, offset + length - 1]` and their SHA-256 (hex).
    public struct Chunk: Sendable, Hashable, Codable {
        public var offset: Int64
        public var length: Int64
        public var sha256: String

        public init(offset: Int64, length: Int64, sha256: String) {
            self.offset = offset
            self.length = length
            self.sha256 = sha256
        }

        /// The last byte's offset.
        public var lastByte: Int64 { offset + length - 1 }
    }

    /// One file of the pack.
    public struct File: Sendable, Hashable, Codable {
        /// Relative, `/`-separated path inside the pack.
        public var path: String
        public var size: Int64
        /// SHA-256 of the whole file (hex).
        public var sha256: String
        /// The strong ETag, quotes included; sent back as `If-Range`.
        public var etag: String
        /// The download URL (a server path, percent-encoded).
        public var url: String
        /// In order, covering the file exactly; none for an empty file.
        public var chunks: [Chunk]

        public init(path: String, size: Int64, sha256: String, etag: String, url: String, chunks: [Chunk]) {
            self.path = path
            self.size = size
            self.sha256 = sha256
            self.etag = etag
            self.url = url
            self.chunks = chunks
        }
    }

    public var pack: String
    public var version: Int
    public var productId: String?
    /// Sum of the file sizes.
    public var downloadBytes: Int64
    public var chunkSize: Int64
    public var files: [File]

    /// The largest chunk a manifest may declare.
    static let maxChunkSize: Int64 = 1 << 30

    public init(pack: String, version: Int, productId: String?, chunkSize: Int64, files: [File]) {
        self.pack = pack
        self.version = version
        self.productId = productId
        self.chunkSize = chunkSize
        self.files = files
        downloadBytes = files.reduce(0) { $0 + $1.size }
    }

    /// Checks what the downloader relies on before anything is written: safe paths, no path both a file and
    /// a directory, chunks tiling each file exactly, hex digests, the total.
    func validated(reserved: String) throws -> DownloadManifest {
        // A chunk is held in memory while it is checked: its size is bounded (the server's own limit is 1 GiB).
        guard chunkSize > 0, chunkSize <= Self.maxChunkSize else {
            throw DepotClientError.invalidResponse("chunkSize \(chunkSize) is outside 1...\(Self.maxChunkSize)")
        }
        var seen = Set<String>()
        for file in files {
            try ManifestPath.check(file.path, reserved: reserved)
            guard seen.insert(file.path).inserted else { throw DepotClientError.invalidResponse("\(file.path) listed twice") }
            var expected: Int64 = 0
            for chunk in file.chunks {
                guard chunk.offset == expected, chunk.length > 0, chunk.length <= chunkSize, ManifestPath.isSHA256Hex(chunk.sha256) else {
                    throw DepotClientError.invalidResponse("chunks of \(file.path) do not tile the file")
                }
                expected += chunk.length  // cannot overflow: at most chunkSize per chunk, and far fewer than 2^33 chunks
            }
            guard expected == file.size, file.size >= 0 else {
                throw DepotClientError.invalidResponse("chunks of \(file.path) do not add up to its size")
            }
        }
        for path in seen {
            var parent = Substring(path)
            while let slash = parent.lastIndex(of: "/") {
                parent = parent[..<slash]
                if seen.contains(String(parent)) {
                    throw DepotClientError.invalidResponse("\(parent) is both a file and a directory")
                }
            }
        }
        var total: Int64 = 0
        for file in files {
            let (sum, overflow) = total.addingReportingOverflow(file.size)
            guard !overflow else { throw DepotClientError.invalidResponse("the file sizes add up to more than 2^63 bytes") }
            total = sum
        }
        guard downloadBytes == total else {
            throw DepotClientError.invalidResponse("downloadBytes is not the sum of the file sizes")
        }
        return self
    }
}

/// The rules a manifest path must follow before it is joined to the destination.
enum ManifestPath {
    /// Refuses anything that could leave the destination or clash with the journal: empty, absolute,
    /// backslash, NUL, empty/`.`/`..` segments, the reserved journal name.
    static func check(_ path: String, reserved: String) throws {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let bad = path.isEmpty || path.hasPrefix("/") || path.contains("\\") || path.contains("\0")
            || segments.contains { $0.isEmpty || $0 == "." || $0 == ".." }
            || path == reserved
        if bad { throw DepotClientError.unsafePath(path) }
    }

    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }
    }
}
