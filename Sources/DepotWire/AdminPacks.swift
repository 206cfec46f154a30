/// `GET /admin/v1/packs` (operations.md §1): every pack on disk with its versions.
public struct AdminPacks: Sendable, Hashable, Codable {
    /// One pack.
    public struct Pack: Sendable, Hashable, Codable {
        public var id: String
        /// The live version (`content/<pack>/current`), `null` when none is.
        public var live: Int?
        /// Every version on disk, oldest first.
        public var versions: [Version]

        public init(id: String, live: Int?, versions: [Version]) {
            self.id = id
            self.live = live
            self.versions = versions
        }

        private enum CodingKeys: String, CodingKey { case id, live, versions }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(live, forKey: .live)
            try container.encode(versions, forKey: .versions)
        }
    }

    /// One version of a pack.
    public struct Version: Sendable, Hashable, Codable {
        public var version: Int
        /// Files in the manifest.
        public var files: Int
        /// Their total size (the manifest's `downloadBytes`).
        public var bytes: Int64
        /// ``State/live``, ``State/staged`` (newer than the live one, not yet live) or ``State/previous``.
        public var state: String
        /// When it was published (RFC 3339), `null` when its manifest does not say.
        public var published: String?
        /// How the version's files are cut into chunks (a manifest without a record of it is fixed-size).
        public var chunking: PackChunking?

        public init(version: Int, files: Int, bytes: Int64, state: String, published: String?, chunking: PackChunking? = nil) {
            self.chunking = chunking
            self.version = version
            self.files = files
            self.bytes = bytes
            self.state = state
            self.published = published
        }

        private enum CodingKeys: String, CodingKey { case version, files, bytes, state, published, chunking }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(files, forKey: .files)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(state, forKey: .state)
            try container.encode(published, forKey: .published)
            try container.encodeIfPresent(chunking, forKey: .chunking)
        }
    }

    /// The values of ``Version/state``.
    public enum State {
        public static let live = "live"
        public static let staged = "staged"
        public static let previous = "previous"

        /// The state of `version` when `live` is the live version: newer versions are staged (published, not yet
        /// made live), older ones previous; without a live version every version is staged.
        public static func of(_ version: Int, live: Int?) -> String {
            guard let live else { return staged }
            return version == live ? Self.live : version > live ? staged : previous
        }
    }

    public var packs: [Pack]

    public init(packs: [Pack]) {
        self.packs = packs
    }
}
