/// Why an admin request (spec §4.7) was refused. Refusals of the publish itself are `PublishError`s.
package enum AdminFailure: Error, Sendable, Equatable {
    /// No valid admin token.
    case unauthorized
    case badPackID(String)
    case badVersion
    /// An upload path with empty segments.
    case malformedFilePath
    /// An upload path that cannot be a pack file (unsafe, `manifest.json`, a dot-name).
    case refusedFilePath(String)
    /// `X-Content-SHA256` or `Digest` is malformed.
    case badDigestField(String)
    case uploadTooLarge(limit: Int64)
    /// The content volume would keep less than its reserve free.
    case insufficientStorage(requiredBytes: Int64, freeBytes: Int64)
    /// A file where a directory of the same upload must go, or the other way round.
    case pathConflict(String)
    /// An upload into a version that is being published.
    case publishInProgress
    /// A publish while uploads into the version are in flight.
    case uploadsInFlight
    /// A publish of a version that is being published already.
    case alreadyPublishing
    /// The publish body is not a JSON object with valid product fields.
    case badPublishBody(String)
    case nothingUploaded(pack: String, version: Int)
    /// The bytes received do not match the digest that was sent.
    case digestMismatch
    /// `Content-Range` on an upload is malformed or disagrees with the body's length.
    case badContentRange(String)
    /// A resumable piece that does not start where the server's partial file ends (`receivedBytes`).
    case uploadOffsetMismatch(receivedBytes: Int64)
    /// A piece of a resumable upload while another piece of the same file is still arriving.
    case resumableUploadBusy(String)
    /// Writing the staging area failed.
    case storage(String)
    /// An upload cannot be deleted: the version is published (published versions go only by pruning).
    case versionPublished(pack: String, version: Int)
    /// The prune body is not `{"keep": N, "pack": ..., "dryRun": ...}`.
    case badPruneBody(String)
    /// The database's publish lock cannot be taken: the shared ledger is unreachable (scale-out §4).
    case publishLockUnavailable
}
