import DepotCore
import HTTP
import Server

/// Per-event-loop memory of the pack routes, so the requests of one download (hundreds of chunk requests
/// with one token) do not repeat work: tokens whose signature was already checked, and files already
/// opened and checked. Each loop owns one; nothing is shared between loops.
///
/// `@unchecked Sendable`: each instance is touched only by the event loop whose index it has (a file opened
/// off the loop is remembered by a job on the loop's thread).
final class PackLoopCache: @unchecked Sendable {
    struct ServedFile: Sendable {
        let file: OpenFile
        let etag: EntityTag
        let contentType: String
    }

    /// The claims of the token this loop authorized last: the request being handled on this loop, right after
    /// its check (the loop handles one request at a time).
    var lastAuthorized: DownloadTokenClaims?

    struct FileKey: Hashable {
        let version: ObjectIdentifier
        let path: String
    }

    /// Tokens with a valid signature, and their claims. The expiry and the revocation are still checked on
    /// every request; only the HMAC and the payload parsing are skipped.
    private var tokens: [String: DownloadTokenClaims] = [:]
    /// Open files by version object and path. A version is immutable and a new publish under the same number
    /// makes a new version object, so a cached descriptor always holds the bytes the manifest describes.
    private var files: [FileKey: ServedFile] = [:]
    private static let capacity = 512
    /// The catalog store's generation the open files belong to: a reload (a publish, a prune) drops them, so
    /// the descriptors of pruned files are released.
    private(set) var generation = -1

    func syncGeneration(_ current: Int) {
        if current != generation {
            files.removeAll()
            generation = current
        }
    }

    func claims(for token: String) -> DownloadTokenClaims? { tokens[token] }

    func remember(_ claims: DownloadTokenClaims, for token: String) {
        if tokens.count >= Self.capacity { tokens.removeAll(keepingCapacity: true) }
        tokens[token] = claims
    }

    func file(_ key: FileKey) -> ServedFile? { files[key] }

    func remember(_ served: ServedFile, for key: FileKey) {
        if files.count >= Self.capacity { files.removeAll(keepingCapacity: true) }
        files[key] = served
    }

    /// `served`, opened off the loop for a request looked up while the open files were those of `generation`:
    /// not remembered when the loop has synced to another generation since (its files are gone), nor over a
    /// file another request opened meanwhile.
    func remember(_ served: ServedFile, for key: FileKey, lookedUpIn generation: Int) {
        guard generation == self.generation, files[key] == nil else { return }
        remember(served, for: key)
    }
}
