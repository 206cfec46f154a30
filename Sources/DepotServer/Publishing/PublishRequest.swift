public import DepotCore
public import DepotWire

/// What to publish: the product fields of spec §2.1 and where the files are.
public struct PublishRequest: Sendable {
    public var pack: String
    public var productID: String
    public var type: ProductType
    public var title: String
    /// nil keeps an existing product's description ("" for a new product).
    public var description: String?
    /// nil picks the next version number.
    public var version: Int?
    /// How files are cut (`--chunking`, default content-defined).
    public var chunking: ChunkingMethod
    /// The average chunk size for `content`, the size for `fixed`; nil for the method's default.
    public var chunkSize: Int64?
    /// Publish without making the version live (`--stage`, `pack-updates.md` §4).
    public var stage: Bool
    /// Files and directories to copy (a directory contributes its contents).
    public var sources: [String]

    public init(pack: String, productID: String, type: ProductType, title: String, description: String? = nil,
                version: Int? = nil, chunking: ChunkingMethod = .content, chunkSize: Int64? = nil, stage: Bool = false,
                sources: [String] = []) {
        self.pack = pack
        self.productID = productID
        self.type = type
        self.title = title
        self.description = description
        self.version = version
        self.chunking = chunking
        self.chunkSize = chunkSize
        self.stage = stage
        self.sources = sources
    }
}

extension PublishRequest {
    /// The chunk size in effect: the one given, or the method's default.
    public var effectiveChunkSize: Int64 { chunkSize ?? chunking.defaultChunkSize }

    /// The manifest's `"chunking"` (the size must be within the method's range).
    var manifestChunking: PackChunking { chunking.chunking(size: effectiveChunkSize) }
}

/// A finished publish.
public struct PublishOutcome: Sendable, Equatable {
    public var pack: String
    public var version: Int
    public var productID: String
    public var files: Int
    public var downloadBytes: Int64
}

/// Why a publish (or retire, prune) did not happen. Nothing was changed in the live tree.
public enum PublishError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Bad arguments: identifiers, missing files, reserved names.
    case invalid(String)
    /// The version exists already, or existed and was pruned, or is older than the newest: versions are
    /// immutable and only go up. `newest` is the pack's highest version number.
    case versionExists(pack: String, version: Int, newest: Int)
    /// The product exists with another pack or another type (an App Store product's type never changes).
    case productConflict(String)
    /// Not enough free space on the content volume.
    case insufficientSpace(requiredBytes: Int64, freeBytes: Int64)
    /// The catalog on disk is broken; fix it first.
    case catalogInvalid(String)
    /// A file operation failed.
    case io(String)
    /// Rollback or promote named a version that was never published (`404`).
    case noSuchVersion(pack: String, version: Int)
    /// Rollback or promote cannot take this version (`409`): pruned, the live one, older than the live one
    /// (promote), newer than it (rollback), or no version to go back to.
    case versionRefused(String)
    /// No such product in the catalog (retire, un-retire).
    case unknownProduct(String)
    /// No such pack in the content directory (prune of one pack).
    case unknownPack(String)

    public var description: String {
        switch self {
        case .invalid(let why): why
        case .versionExists(let pack, let version, let newest):
            PublishConflict.versionNotAbove(pack: pack, version: version, newest: newest).description
        case .productConflict(let why): why
        case .insufficientSpace(let required, let free):
            "not enough space on the content volume: \(required) bytes required (files plus reserve), \(free) bytes free; nothing was written"
        case .catalogInvalid(let why): "the catalog is not valid, fix it first: \(why)"
        case .io(let why): why
        case .noSuchVersion(let pack, let version): "pack \(pack) has no version \(version)"
        case .versionRefused(let why): why
        case .unknownProduct(let id): "no product \"\(id)\" in the catalog"
        case .unknownPack(let id): "no pack \"\(id)\" in the content directory"
        }
    }
}
