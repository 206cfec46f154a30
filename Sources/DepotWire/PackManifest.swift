/// A pack version's manifest (spec §4.4): every file with its size, SHA-256, strong ETag, URL and chunk
/// hashes; with `?available=` the server adds a download ``plan``. The server writes it at publish time
/// (`content/<pack>/<version>/manifest.json`) and serves it; the client decodes the same type.
public struct PackManifest: Sendable, Hashable, Codable {
    /// One chunk of a file: bytes `[offset, offset + length - 1]` and their SHA-256 (hex).
    public struct Chunk: Sendable, Hashable, Codable {
        /// Where an installed version holds the same bytes (`?from=`, `pack-updates.md` §2).
        public struct Reuse: Sendable, Hashable, Codable {
            /// The file of the installed version.
            public var path: String
            /// The offset of the bytes in that file.
            public var offset: Int64

            public init(path: String, offset: Int64) {
                self.path = path
                self.offset = offset
            }
        }

        public var offset: Int64
        public var length: Int64
        public var sha256: String
        /// Present only in a manifest fetched with `?from=`: the bytes can be copied from the installed version.
        public var reuse: Reuse?

        public init(offset: Int64, length: Int64, sha256: String, reuse: Reuse? = nil) {
            self.offset = offset
            self.length = length
            self.sha256 = sha256
            self.reuse = reuse
        }
    }

    /// One file of the pack.
    public struct File: Sendable, Hashable, Codable {
        /// Relative, `/`-separated path inside the version.
        public var path: String
        public var size: Int64
        /// SHA-256 of the whole file (hex).
        public var sha256: String
        /// The strong, content-derived ETag, quotes included; sent back as `If-Range`.
        public var etag: String
        /// The download path (``WirePath/packFile(pack:version:path:)``, percent-encoded).
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

        /// The chunks on a line of their own.
        private enum CodingKeys: String, CodingKey, WireLayoutKey {
            case path, size, sha256, etag, url, chunks
            var startsLine: Bool { self == .chunks }
            var elementsStartLines: Bool { false }
        }
    }

    public var pack: String
    public var version: Int
    /// The product that unlocks the pack (`null` when none was recorded).
    public var productId: String?
    /// Sum of the file sizes.
    public var downloadBytes: Int64
    /// The largest length a chunk may have.
    public var chunkSize: Int64
    /// How the files were cut (nil in manifests published before content-defined chunking: fixed at `chunkSize`).
    public var chunking: PackChunking?
    /// When the version was published (RFC 3339): the files' `Last-Modified`. The server always writes it.
    public var published: String?
    public var files: [File]
    /// Present only in answers to `?from=`: `null` (``PackDelta/unavailable``) or the delta's figures.
    public var delta: PackDelta?
    /// The disk-space-aware plan, present only in answers to `?available=`.
    public var plan: ChunkPlan?

    public init(pack: String, version: Int, productId: String?, chunkSize: Int64, chunking: PackChunking? = nil, published: String? = nil,
                files: [File], delta: PackDelta? = nil, plan: ChunkPlan? = nil) {
        self.pack = pack
        self.version = version
        self.productId = productId
        self.chunkSize = chunkSize
        self.chunking = chunking
        self.delta = delta
        self.published = published
        self.files = files
        self.plan = plan
        downloadBytes = files.reduce(0) { $0 + $1.size }
    }

    /// The stored layout: identity on the first line, sizes on the second, then one line per file, and the
    /// plan on a line of its own.
    private enum CodingKeys: String, CodingKey, WireLayoutKey {
        case pack, version, productId, downloadBytes, chunkSize, chunking, published, delta, files, plan
        var startsLine: Bool { self == .downloadBytes || self == .delta || self == .files || self == .plan }
        var elementsStartLines: Bool { self == .files }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pack = try container.decode(String.self, forKey: .pack)
        version = try container.decode(Int.self, forKey: .version)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        downloadBytes = try container.decode(Int64.self, forKey: .downloadBytes)
        chunkSize = try container.decode(Int64.self, forKey: .chunkSize)
        chunking = try container.decodeIfPresent(PackChunking.self, forKey: .chunking)
        if container.contains(.delta) {
            delta = try container.decodeNil(forKey: .delta) ? .unavailable : .summary(try container.decode(PackDelta.Summary.self, forKey: .delta))
        }
        published = try container.decodeIfPresent(String.self, forKey: .published)
        files = try container.decode([File].self, forKey: .files)
        plan = try container.decodeIfPresent(ChunkPlan.self, forKey: .plan)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pack, forKey: .pack)
        try container.encode(version, forKey: .version)
        try container.encode(productId, forKey: .productId)
        try container.encode(downloadBytes, forKey: .downloadBytes)
        try container.encode(chunkSize, forKey: .chunkSize)
        try container.encodeIfPresent(chunking, forKey: .chunking)
        try container.encodeIfPresent(published, forKey: .published)
        if let delta { try container.encode(delta, forKey: .delta) }
        try container.encode(files, forKey: .files)
        try container.encodeIfPresent(plan, forKey: .plan)
    }
}
