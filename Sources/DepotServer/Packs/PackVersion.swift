import DepotCore
import DepotWire
import DepotCrypto
import HTTP

/// One published version of a pack, loaded from its manifest. Immutable.
final class PackVersion: Sendable {
    let pack: String
    let version: Int
    /// Absolute path of the version directory.
    let directory: String
    let manifest: PackManifest
    /// The manifest as served (the bytes on disk).
    let manifestBody: [UInt8]
    let manifestETag: EntityTag
    /// Publish time, seconds since 1970: the files' `Last-Modified`.
    let lastModified: Int64
    /// `lastModified` as an HTTP date.
    let lastModifiedText: String
    /// Files by manifest path; only files that are regular files inside the version directory (no symlinks).
    let files: [String: PackManifest.File]

    init(pack: String, version: Int, directory: String, manifest: PackManifest, manifestBody: [UInt8],
         servableFiles: [String: PackManifest.File]) {
        self.pack = pack
        self.version = version
        self.directory = directory
        self.manifest = manifest
        self.manifestBody = manifestBody
        self.manifestETag = EntityTag(opaqueTag: Hex.encode(SHA256.hash(manifestBody).prefix(16)))
        self.lastModified = manifest.publishedSeconds
        self.lastModifiedText = HTTPDate.format(manifest.publishedSeconds)
        self.files = servableFiles
    }
}

/// A pack directory: its live version and every version still on disk.
struct PackEntry: Sendable {
    let id: String
    /// The live version, from `content/<pack>/current`.
    let current: Int?
    let versions: [Int: PackVersion]

    var live: PackVersion? { current.flatMap { versions[$0] } }
}
