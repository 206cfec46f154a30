/// `201` to `POST /admin/v1/packs/{pack}/{version}/publish` (spec §4.7): the version now live.
public struct PublishAnswer: Sendable, Hashable, Codable {
    public var pack: String
    public var version: Int
    public var productId: String
    /// How many files the version has.
    public var files: Int
    public var downloadBytes: Int64
    /// The version's manifest path.
    public var manifest: String

    public init(pack: String, version: Int, productId: String, files: Int, downloadBytes: Int64, manifest: String) {
        self.pack = pack
        self.version = version
        self.productId = productId
        self.files = files
        self.downloadBytes = downloadBytes
        self.manifest = manifest
    }
}
