import DepotCore

/// Why a pack URL (spec §4.4) is not answered with the manifest or the file. Token refusals are
/// ``TokenRejection``s; a bad plan query is a `ChunkPlan.Failure`.
package enum PackFailure: Error, Sendable, Equatable {
    /// The path has a pack URL's shape but a malformed pack ID, version or file path.
    case malformedURL
    case noPack(String)
    case noLiveVersion(pack: String)
    /// `?staged=true` on a pack without a version newer than the live one.
    case noStagedVersion(pack: String)
    /// `from` is not a positive decimal integer without sign or leading zeros.
    case badFromVersion
    case noVersion(pack: String, version: Int)
    case noFile(pack: String, version: Int, path: String)
    /// The manifest lists the file but it is not (or no longer) a regular file inside the version.
    case fileMissingOnDisk
    /// Out of file descriptors: try again shortly.
    case cannotOpenMoreFiles
    /// The file on disk does not have the size its manifest records.
    case contentCorrupt
}
