/// `201` to `PUT /admin/v1/packs/{pack}/{version}/files/{path}` (spec §4.7): the file as staged.
public struct UploadAnswer: Sendable, Hashable, Codable {
    public var path: String
    public var size: Int64
    /// SHA-256 of the bytes received (hex).
    public var sha256: String

    public init(path: String, size: Int64, sha256: String) {
        self.path = path
        self.size = size
        self.sha256 = sha256
    }
}
