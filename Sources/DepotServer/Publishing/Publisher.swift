package import DepotCore
import DepotWire
import DepotCrypto
public import Foundation
import Glibc
public import Platform

/// Publishes pack versions and edits the catalog, crash-safely (spec §5, issue 5).
///
/// Order of a publish: check the catalog and free space → copy and hash into `content/.staging/` →
/// write the manifest → fsync files and directories → rename the version directory into place →
/// write `current` (temp + fsync + rename) → rewrite `catalog/products.json` and `catalog/lists.json`
/// the same way. A crash before the rename leaves only staging leftovers (cleaned by the next publish);
/// a crash after it leaves a complete version. One publisher at a time (an exclusive `flock`).
public struct Publisher: Sendable {
    public let paths: DepotPaths
    let space: any VolumeSpace
    let durableStepDone: @Sendable (String) -> Void
    let now: @Sendable () -> Int64
    /// How a pack's newest version is read from its directory: ``VersionReader/system`` unless a test gave its own.
    private(set) var versionReader = VersionReader.system

    /// - Parameters:
    ///   - space: free-space figures of the content volume (tests and the test publisher fake a full one).
    ///   - durableStepDone: called after each durable file operation of a publish with its name (`manifest`,
    ///     `current`, ...); the crash-safety tests' publisher kills itself at the N-th one.
    public init(paths: DepotPaths, space: any VolumeSpace = SystemVolumeSpace(),
                durableStepDone: @escaping @Sendable (String) -> Void = { _ in },
                now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.paths = paths
        self.space = space
        self.durableStepDone = durableStepDone
        self.now = now
    }

    /// A publisher that reads a pack's newest version with `versionReader`.
    package init(paths: DepotPaths, space: any VolumeSpace, versionReader: VersionReader) {
        self.init(paths: paths, space: space)
        self.versionReader = versionReader
    }

    /// Reads a pack's newest version from disk; a test's reader holds the read to see where it runs.
    package struct VersionReader: Sendable {
        /// The highest version number among the version directories in a pack's directory and its `current`
        /// (0 when it has none).
        package var newest: @Sendable (_ packDirectory: String) -> Int

        package init(newest: @escaping @Sendable (_ packDirectory: String) -> Int) { self.newest = newest }

        /// The directory's listing and the text of its `current`.
        package static let system = VersionReader { directory in
            let existing = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap { Identifiers.parseVersion($0) }
            let current = (try? String(contentsOfFile: directory + "/current", encoding: .utf8))
                .flatMap { Identifiers.parseVersion($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
            return max(existing.max() ?? 0, current)
        }
    }

    var stagingDirectory: String { paths.contentDirectory + "/" + ContentIndex.stagingDirectoryName }

    /// Space the content volume keeps free: 5 % of the volume, at most 64 MiB.
    public func reserveBytes() -> Int64 {
        min(64 << 20, space.totalBytes(at: paths.contentDirectory) / 20)
    }

    /// Refuses (writing nothing) when `bytes` more would leave less than the reserve free.
    public func checkSpace(for bytes: Int64) throws(PublishError) {
        let free = space.freeBytes(at: paths.contentDirectory)
        let required = bytes + reserveBytes()
        if free < required { throw .insufficientSpace(requiredBytes: required, freeBytes: free) }
    }

    // MARK: - Publish

    /// Copies the request's files into a new version and makes it live.
    public func publish(_ request: PublishRequest) throws(PublishError) -> PublishOutcome {
        try validate(request)
        let sources = try SourceFiles.collect(request.sources)
        let total = sources.reduce(Int64(0)) { $0 + $1.size }
        let shortest = request.chunking == .content ? max(1, request.effectiveChunkSize / 4) : request.effectiveChunkSize
        let chunkCount = sources.reduce(Int64(0)) { $0 + ($1.size + shortest - 1) / shortest }
        try checkSpace(for: total + 4096 + 200 * Int64(sources.count) + 100 * chunkCount)
        return try withLock { () throws(PublishError) -> PublishOutcome in
            try publishLocked(request) { version, stage throws(PublishError) in
                var entries: [PackManifest.File] = []
                for source in sources {
                    let destination = stage + "/" + source.relative
                    try makeParents(of: destination, under: stage)
                    let digest = try StreamingCopy.copy(from: source.absolute, to: destination, chunking: request.manifestChunking)
                    durableStepDone("copied \(source.relative)")
                    entries.append(fileEntry(pack: request.pack, version: version, path: source.relative, digest: digest))
                }
                return entries
            }
        }
    }

    /// Publishes files already uploaded into `directory` on the content volume (the admin API): they are
    /// hashed in place and the directory itself becomes the version.
    public func publishStaged(_ request: PublishRequest, uploadedDirectory directory: String) throws(PublishError) -> PublishOutcome {
        try validate(request)
        return try withLock { () throws(PublishError) -> PublishOutcome in
            if Self.hasPartialUploads(directory) { throw .invalid("an upload into this version is still in progress") }
            return try publishLocked(request, adopt: directory) { version, stage throws(PublishError) in
                // An upload that started just before the claim left its partial file here: refuse, keep everything.
                if Self.hasPartialUploads(stage) { throw .invalid("an upload into this version is still in progress") }
                // What an earlier, failed publish of these uploads left behind is not part of the pack.
                for name in (try? FileManager.default.contentsOfDirectory(atPath: stage)) ?? []
                where name == "manifest.json" || name.hasPrefix(".manifest.json.tmp-") {
                    unlink(stage + "/" + name)
                }
                var entries: [PackManifest.File] = []
                let relatives = FileTree.relativeFiles(under: stage)
                for relative in relatives {
                    guard Identifiers.isSafeRelativePath(relative), relative != "manifest.json",
                          FileStatus.isContainedRegularFile(base: stage, relative: relative) else {
                        throw .invalid("\(relative): not a publishable file")
                    }
                    switch FileDigest.compute(path: stage + "/" + relative, chunking: request.manifestChunking) {
                    case .failure(let failure): throw .io("\(relative): \(failure)")
                    case .success(let digest):
                        entries.append(fileEntry(pack: request.pack, version: version, path: relative, digest: digest))
                    }
                    do { try FileSync.sync(path: stage + "/" + relative) } catch { throw .io("\(error)") }
                }
                guard !entries.isEmpty else { throw .invalid("nothing was uploaded for this version") }
                return entries
            }
        }
    }

    static func hasPartialUploads(_ directory: String) -> Bool {
        FileTree.relativeFiles(under: directory).contains {
            let name = ($0 as NSString).lastPathComponent
            return name.hasPrefix(".partial-") || name.hasPrefix(".resume-")
        }
    }

    private func validate(_ request: PublishRequest) throws(PublishError) {
        guard Identifiers.isValidPackID(request.pack) else { throw .invalid("pack ID \"\(request.pack)\" is not valid (A-Z a-z 0-9 . _ -)") }
        guard Identifiers.isValidProductID(request.productID) else {
            throw .invalid("product ID \"\(request.productID)\" is not valid (1 to 255 characters of A-Z a-z 0-9 . _ -)")
        }
        guard !request.title.isEmpty else { throw .invalid("the title must not be empty") }
        let sizes = request.chunking.chunkSizeRange
        guard sizes.contains(request.effectiveChunkSize) else {
            throw .invalid(request.chunking == .content
                ? "the average chunk size must be between \(sizes.lowerBound) and \(sizes.upperBound) bytes for content chunking"
                : "the chunk size must be between \(sizes.lowerBound) and \(sizes.upperBound) bytes")
        }
        if let version = request.version, version < 1 { throw .invalid("the version must be a positive integer") }
    }

    private func fileEntry(pack: String, version: Int, path: String, digest: FileDigest) -> PackManifest.File {
        PackManifest.File(path: path, size: digest.size, sha256: digest.sha256,
                          etag: PackManifest.entityTag(forSHA256: digest.sha256),
                          url: PackManifest.url(pack: pack, version: version, path: path), chunks: digest.chunks)
    }

    /// The common part: version choice, staging, manifest, rename, `current`, catalog.
    func publishLocked(_ request: PublishRequest, adopt: String? = nil, chunking: PackChunking? = nil,
                       fill: (Int, String) throws(PublishError) -> [PackManifest.File]) throws(PublishError) -> PublishOutcome {
        // The catalog must be readable before anything is written.
        let oldCatalog = try loadCatalog()
        try Self.checkOwnership(request, catalog: oldCatalog)
        // A staged version is one newer than the live one (`pack-updates.md` §4): there must be a live one.
        if request.stage, liveVersion(pack: request.pack) == nil {
            throw .versionRefused("pack \(request.pack) has no live version: publish it once without --stage first")
        }
        let oldContent = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: ManifestCache())
        let packDirectory = paths.contentDirectory + "/" + request.pack
        let version = try chooseVersion(request)

        let stage: String
        removeStaleStaging()
        if let adopt {
            // Claim the uploads with one rename: an upload that arrives from now on starts a new directory
            // instead of changing bytes that are being hashed.
            stage = stagingDirectory + "/claim-\(request.pack)-\(version)-\(UInt32.random(in: 0...UInt32.max))"
            guard rename(adopt, stage) == 0 else { throw .io("cannot claim the uploads: \(systemMessage(errno))") }
        } else {
            stage = stagingDirectory + "/publish-\(request.pack)-\(version)-\(UInt32.random(in: 0...UInt32.max))"
            do { try DurableFiles.makeDirectory(stage) } catch { throw .io(error.description) }
        }
        var published = false
        defer {
            if !published {
                if let adopt {
                    // Give the uploads back for a retry (unless new ones arrived meanwhile), without what this
                    // attempt wrote.
                    unlink(stage + "/manifest.json")
                    if rename(stage, adopt) != 0 { DurableFiles.removeTree(stage) }
                } else {
                    DurableFiles.removeTree(stage)
                }
            }
        }

        let files = try fill(version, stage)
        let cutting = chunking ?? request.manifestChunking
        let manifest = PackManifest(pack: request.pack, version: version, productId: request.productID,
                                    chunkSize: cutting.largestChunk, chunking: cutting, published: Timestamp.rfc3339(now()), files: files)
        do {
            try DurableFiles.writeAtomically(manifest.encoded(), to: stage + "/manifest.json")
            durableStepDone("manifest")
            try FileSync.syncDirectories(under: stage)
            durableStepDone("staging synced")
            try DurableFiles.makeDirectory(packDirectory)
            guard rename(stage, packDirectory + "/\(version)") == 0 else {
                let code = errno
                if code == EEXIST || code == ENOTEMPTY { throw PublishError.versionExists(pack: request.pack, version: version, newest: version) }
                throw PublishError.io("cannot move the version into place: \(systemMessage(code))")
            }
            published = true
            try DurableFiles.syncDirectory(packDirectory)
            try DurableFiles.syncDirectory((stage as NSString).deletingLastPathComponent)
            durableStepDone("version in place")
            if !request.stage {
                try DurableFiles.writeAtomically(Array("\(version)\n".utf8), to: packDirectory + "/current")
                durableStepDone("current")
            }
        } catch let error as PublishError {
            throw error
        } catch let error as DurableFiles.Failure {
            throw .io(error.description)
        } catch {
            throw .io("\(error)")
        }

        let outcome = PublishOutcome(pack: request.pack, version: version, productID: request.productID, files: files.count,
                                     downloadBytes: manifest.downloadBytes)
        // A staged version changes neither `current` nor the catalog: the lists and their validators stay.
        if request.stage { return outcome }
        var catalog = oldCatalog
        if let index = catalog.products.firstIndex(where: { $0.id == request.productID }) {
            catalog.products[index].type = request.type
            catalog.products[index].title = request.title
            if let description = request.description { catalog.products[index].description = description }
            catalog.products[index].pack = request.pack
            catalog.products[index].status = .live
        } else {
            catalog.products.append(Product(id: request.productID, type: request.type, title: request.title,
                                            description: request.description ?? "", pack: request.pack, status: .live))
        }
        try writeCatalog(catalog, previous: oldCatalog, previousContent: oldContent)
        return outcome
    }

    /// The ownership rules of ``PublishRules`` as a publish refusal.
    static func checkOwnership(_ request: PublishRequest, catalog: Catalog) throws(PublishError) {
        if let conflict = PublishRules.ownershipConflict(productID: request.productID, pack: request.pack, type: request.type, in: catalog) {
            throw .productConflict(conflict.description)
        }
    }

    private func chooseVersion(_ request: PublishRequest) throws(PublishError) -> Int {
        let newest = newestVersion(pack: request.pack)
        if let version = request.version {
            if let refusal = Self.versionRefusal(pack: request.pack, version: version, newest: newest) { throw refusal }
            return version
        }
        return newest + 1
    }

    /// The highest version number of `pack` among its version directories and `current` (0 for a new pack).
    func newestVersion(pack: String) -> Int { versionReader.newest(paths.contentDirectory + "/" + pack) }

    /// ``PublishRules/versionRefusal(pack:version:newest:)`` as a publish refusal.
    static func versionRefusal(pack: String, version: Int, newest: Int) -> PublishError? {
        PublishRules.versionRefusal(pack: pack, version: version, newest: newest)
            .map { _ in .versionExists(pack: pack, version: version, newest: newest) }
    }

    /// Why version `version` of `pack` cannot be published (nil when it can). The admin API asks before it
    /// accepts uploads for a version.
    public func versionRefusal(pack: String, version: Int) -> PublishError? {
        Self.versionRefusal(pack: pack, version: version, newest: newestVersion(pack: pack))
    }

    /// Removes what crashed publishes left in staging (only called with the lock held).
    func removeStaleStaging() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: stagingDirectory)) ?? []
        for name in names where name.hasPrefix("publish-") || name.hasPrefix("prune-") || name.hasPrefix("claim-") {
            DurableFiles.removeTree(stagingDirectory + "/" + name)
        }
    }

    // MARK: - Catalog files

    /// The catalog as it is on disk (empty when there is no `products.json` yet).
    package func loadCatalog() throws(PublishError) -> Catalog {
        guard let data = FileManager.default.contents(atPath: paths.productsFile) else {
            if !FileManager.default.fileExists(atPath: paths.productsFile) { return Catalog(products: []) }
            throw .catalogInvalid("\(paths.productsFile) cannot be read")
        }
        switch CatalogDecoder.decode([UInt8](data), file: paths.productsFile) {
        case .success(let catalog): return catalog
        case .failure(let problems): throw .catalogInvalid(problems.description)
        }
    }

    /// Rewrites `products.json` and the validator record (`lists.json`): a list whose content did not change
    /// keeps its `Last-Modified`; a changed one takes the publish time.
    func writeCatalog(_ catalog: Catalog, previous: Catalog, previousContent: ContentIndex) throws(PublishError) {
        let content = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: ManifestCache())
        let before = SnapshotLoader.listContentHashes(catalog: previous, content: previousContent)
        let after = SnapshotLoader.listContentHashes(catalog: catalog, content: content)
        var record = ListValidatorRecord.load(from: URL(fileURLWithPath: paths.listRecordFile))
        let fileTime = FileStatus.modificationTime(paths.productsFile) ?? now()
        let time = now()
        for (name, old, new) in [("products_v1.json", before.v1, after.v1), ("products_v2.json", before.v2, after.v2)] {
            let oldTime = record.lastModified(of: name, contentHash: old, fallback: fileTime)
            record.entries[name] = ListValidatorRecord.Entry(sha256: new, lastModified: old == new ? oldTime : time)
        }
        do {
            try DurableFiles.writeAtomically(CatalogDecoder.encode(catalog), to: paths.productsFile)
            durableStepDone("products.json")
            try DurableFiles.writeAtomically(record.encoded(), to: paths.listRecordFile)
            durableStepDone("lists.json")
        } catch {
            throw .io(error.description)
        }
    }

    // MARK: - Locking and helpers

    /// Runs `body` holding the exclusive publish lock (`content/.staging/.lock`).
    func withLock<T>(_ body: () throws(PublishError) -> T) throws(PublishError) -> T {
        do { try DurableFiles.makeDirectory(stagingDirectory) } catch { throw .io(error.description) }
        let fd = open(stagingDirectory + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot open the publish lock: \(systemMessage(errno))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io("cannot take the publish lock: \(systemMessage(errno))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    private func makeParents(of path: String, under root: String) throws(PublishError) {
        let parent = (path as NSString).deletingLastPathComponent
        guard parent != root else { return }
        do { try DurableFiles.makeDirectory(parent) } catch { throw .io(error.description) }
    }
}
