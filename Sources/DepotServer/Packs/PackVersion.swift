import DepotCore
package import DepotWire
import DepotCrypto
import HTTP
import Synchronization

/// One published version of a pack, loaded from its manifest. Immutable.
package final class PackVersion: Sendable {
    let pack: String
    /// The version number.
    package let version: Int
    /// Absolute path of the version directory.
    let directory: String
    /// The manifest as parsed.
    package let manifest: PackManifest
    /// The manifest as served (the bytes on disk).
    let manifestBody: [UInt8]
    let manifestETag: EntityTag
    /// Publish time, seconds since 1970: the files' `Last-Modified`.
    let lastModified: Int64
    /// `lastModified` as an HTTP date.
    let lastModifiedText: String
    /// Files by manifest path; only files that are regular files inside the version directory (no symlinks).
    package let files: [String: PackManifest.File]
    /// Manifests answered to `?from=`, by `from`: computed once per pair of versions (both immutable), tagged
    /// with the old version's manifest ETag so that a pruned or republished old version is never answered from
    /// the cache. At most one entry per version of the pack.
    private let deltas = Mutex<[Int: DeltaAnswer]>([:])

    /// A manifest answered to `?from=`: the wire manifest (for plans) and its bytes.
    struct DeltaAnswer: Sendable {
        let oldTag: EntityTag?
        let manifest: PackManifest
        let body: [UInt8]
        let etag: EntityTag
    }

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

    /// This version's manifest against `old` (nil: not a version that still has its manifest), from the cache
    /// when the same pair was asked before.
    func delta(from fromVersion: Int, old: PackVersion?) throws -> DeltaAnswer {
        let oldTag = old?.manifestETag
        if let hit = deltas.withLock({ $0[fromVersion] }), hit.oldTag == oldTag { return hit }
        let manifest = self.manifest.delta(from: old?.manifest, fromVersion: fromVersion)
        let body = try manifest.encoded()
        let answer = DeltaAnswer(oldTag: oldTag, manifest: manifest, body: body,
                                 etag: EntityTag(opaqueTag: Hex.encode(SHA256.hash(body).prefix(16))))
        // A `from` that names no version is answered without being remembered (any number may be asked).
        if old != nil { deltas.withLock { $0[fromVersion] = answer } }
        return answer
    }
}

/// A pack directory: its live version and every version still on disk.
package struct PackEntry: Sendable {
    let id: String
    /// The live version, from `content/<pack>/current`.
    package let current: Int?
    /// Every version still on disk, by number.
    package let versions: [Int: PackVersion]

    /// The live version, if it loaded.
    package var live: PackVersion? { current.flatMap { versions[$0] } }
}
