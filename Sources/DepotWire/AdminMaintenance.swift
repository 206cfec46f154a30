/// The body of `POST /admin/v1/prune` (operations.md §1): keep the newest `keep` versions of every pack (or of
/// `pack`), never the live one; `dryRun` only says what would go.
public struct PruneRequest: Sendable, Hashable, Codable {
    public var keep: Int
    public var pack: String?
    public var dryRun: Bool?

    public init(keep: Int, pack: String? = nil, dryRun: Bool? = nil) {
        self.keep = keep
        self.pack = pack
        self.dryRun = dryRun
    }
}

/// `200` to `POST /admin/v1/prune`: what was removed (or, with `dryRun`, what would be).
public struct PruneAnswer: Sendable, Hashable, Codable {
    /// One removed version.
    public struct Removed: Sendable, Hashable, Codable {
        public var pack: String
        public var version: Int
        /// Bytes of its files on disk.
        public var bytes: Int64

        public init(pack: String, version: Int, bytes: Int64) {
            self.pack = pack
            self.version = version
            self.bytes = bytes
        }
    }

    public var removed: [Removed]
    public var dryRun: Bool

    public init(removed: [Removed], dryRun: Bool) {
        self.removed = removed
        self.dryRun = dryRun
    }
}

/// `200` to `GET /admin/v1/check` (operations.md §1): what `depot check` reports.
public struct CheckAnswer: Sendable, Hashable, Codable {
    /// One problem, with the file and the field it is in (`field` is empty for a whole file).
    public struct Problem: Sendable, Hashable, Codable {
        public var file: String
        public var field: String
        public var message: String

        public init(file: String, field: String, message: String) {
            self.file = file
            self.field = field
            self.message = message
        }
    }

    public var ok: Bool
    public var problems: [Problem]

    public init(ok: Bool, problems: [Problem]) {
        self.ok = ok
        self.problems = problems
    }
}
