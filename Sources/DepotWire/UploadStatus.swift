/// What the server holds of one resumable admin upload (`GET`/`HEAD` on the upload path, and the answer to a
/// `PUT` with `Content-Range` that did not finish the file): `receivedBytes` of `size` arrived; a resumed upload
/// continues at `receivedBytes`. `complete` is true once the whole file is stored (then `receivedBytes == size`).
public struct UploadStatus: Sendable, Hashable, Codable {
    public var path: String
    public var receivedBytes: Int64
    /// The file's total size, as the upload declared it.
    public var size: Int64
    public var complete: Bool

    public init(path: String, receivedBytes: Int64, size: Int64, complete: Bool) {
        self.path = path
        self.receivedBytes = receivedBytes
        self.size = size
        self.complete = complete
    }
}
