import DepotCore
import DepotWire
import Foundation
import Glibc

/// Rollback and promote (`pack-updates.md` §3, §4): a version made live without new bytes.
extension Publisher {
    /// The version `content/<pack>/current` names, or nil.
    func liveVersion(pack: String) -> Int? {
        (try? String(contentsOfFile: paths.contentDirectory + "/" + pack + "/current", encoding: .utf8))
            .flatMap { Identifiers.parseVersion($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The version numbers of `pack` on disk (directories with a manifest), ascending.
    func versionsOnDisk(pack: String) -> [Int] {
        let directory = paths.contentDirectory + "/" + pack
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .compactMap { Identifiers.parseVersion($0) }
            .filter { FileStatus.isRegularFile(directory + "/\($0)/manifest.json") }
            .sorted()
    }

    /// A version's stored manifest.
    func storedManifest(pack: String, version: Int) throws(PublishError) -> PackManifest {
        let path = paths.contentDirectory + "/\(pack)/\(version)/manifest.json"
        guard let data = FileManager.default.contents(atPath: path) else { throw .io("\(path) cannot be read") }
        do { return try PackManifest.decode([UInt8](data), file: path) } catch { throw .io(error.description) }
    }

    /// Why `version` of `pack` cannot be a target: never published (`404`) or pruned (`409`). Versions only go
    /// up, so a missing number at or below the newest is taken as pruned.
    private func checkExists(pack: String, version: Int) throws(PublishError) {
        guard !versionsOnDisk(pack: pack).contains(version) else { return }
        if version <= newestVersion(pack: pack) {
            throw .versionRefused("version \(version) of pack \(pack) was pruned")
        }
        throw .noSuchVersion(pack: pack, version: version)
    }

    // MARK: - Promote

    /// Makes staged version `version` live (`depot promote`, `POST /admin/v1/packs/{pack}/{version}/promote`):
    /// writes `current` and updates the catalog as a publish does. A version older than the live one is
    /// refused (`409`); the live one itself is answered as it is, changing nothing.
    public func promote(pack: String, version: Int) throws(PublishError) -> PublishOutcome {
        guard Identifiers.isValidPackID(pack) else { throw .invalid("pack ID \"\(pack)\" is not valid (A-Z a-z 0-9 . _ -)") }
        return try withLock { () throws(PublishError) -> PublishOutcome in
            try checkExists(pack: pack, version: version)
            let manifest = try storedManifest(pack: pack, version: version)
            let live = liveVersion(pack: pack)
            if let live, version < live {
                throw .versionRefused("version \(version) of pack \(pack) is older than the live version \(live): only a staged version can be promoted (roll back instead)")
            }
            let outcome = PublishOutcome(pack: pack, version: version, productID: manifest.productId ?? "", files: manifest.files.count,
                                         downloadBytes: manifest.downloadBytes)
            if live == version { return outcome }
            let oldCatalog = try loadCatalog()
            var catalog = oldCatalog
            guard let productID = manifest.productId, let index = catalog.products.firstIndex(where: { $0.id == productID }) else {
                throw .invalid("version \(version) of pack \(pack) names no product of the catalog")
            }
            let oldContent = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: ManifestCache())
            do {
                try DurableFiles.writeAtomically(Array("\(version)\n".utf8), to: paths.contentDirectory + "/\(pack)/current")
            } catch {
                throw .io("\(error)")
            }
            durableStepDone("current")
            catalog.products[index].pack = pack
            catalog.products[index].status = .live
            try writeCatalog(catalog, previous: oldCatalog, previousContent: oldContent)
            return outcome
        }
    }

    // MARK: - Rollback

    /// Publishes the next version with the files of version `to` (default: the newest version older than the
    /// live one that still exists), hard-linked when the volume allows, with `to`'s chunk hashes, and makes it
    /// live like any publish (`depot rollback`, `POST /admin/v1/packs/{pack}/rollback`). Refused, changing
    /// nothing: a pruned target, the live one, one newer than it (`409`); one never published (`404`).
    public func rollback(pack: String, to requested: Int?) throws(PublishError) -> PublishOutcome {
        guard Identifiers.isValidPackID(pack) else { throw .invalid("pack ID \"\(pack)\" is not valid (A-Z a-z 0-9 . _ -)") }
        return try withLock { () throws(PublishError) -> PublishOutcome in
            guard let live = liveVersion(pack: pack) else {
                throw newestVersion(pack: pack) == 0 ? .noSuchVersion(pack: pack, version: requested ?? 1)
                    : .versionRefused("pack \(pack) has no live version to roll back from")
            }
            let target: Int
            if let requested {
                try checkExists(pack: pack, version: requested)
                target = requested
            } else {
                guard let older = versionsOnDisk(pack: pack).last(where: { $0 < live }) else {
                    throw .versionRefused("pack \(pack) has no version older than the live version \(live) left to roll back to")
                }
                target = older
            }
            if target == live { throw .versionRefused("version \(target) of pack \(pack) is the live version") }
            if target > live {
                throw .versionRefused("version \(target) of pack \(pack) is newer than the live version \(live): promote it instead")
            }
            let old = try storedManifest(pack: pack, version: target)
            let catalog = try loadCatalog()
            guard let productID = old.productId, let product = catalog.products.first(where: { $0.id == productID }) else {
                throw .invalid("version \(target) of pack \(pack) names no product of the catalog")
            }
            let request = PublishRequest(pack: pack, productID: productID, type: product.type, title: product.title,
                                         description: product.description)
            try checkSpace(for: 4096 + 200 * Int64(old.files.count) + 100 * Int64(old.files.reduce(0) { $0 + $1.chunks.count }))
            let source = paths.contentDirectory + "/\(pack)/\(target)"
            return try publishLocked(request, chunking: old.effectiveChunking) { version, stage throws(PublishError) in
                var files: [PackManifest.File] = []
                for file in old.files {
                    let destination = stage + "/" + file.path
                    let parent = (destination as NSString).deletingLastPathComponent
                    if parent != stage { do { try DurableFiles.makeDirectory(parent) } catch { throw .io("\(error)") } }
                    try Self.linkOrCopy(source + "/" + file.path, to: destination)
                    durableStepDone("linked \(file.path)")
                    var entry = file
                    entry.url = PackManifest.url(pack: pack, version: version, path: file.path)
                    files.append(entry)
                }
                return files
            }
        }
    }

    /// A hard link to `source` (versions are immutable, so they can share inodes), or a copy where the volume
    /// refuses links.
    static func linkOrCopy(_ source: String, to destination: String) throws(PublishError) {
        if link(source, destination) == 0 { return }
        let code = errno
        guard code == EXDEV || code == EPERM || code == EMLINK || code == ENOTSUP || code == EOPNOTSUPP else {
            throw .io("cannot link \(source): \(systemMessage(code))")
        }
        do {
            try FileManager.default.copyItem(atPath: source, toPath: destination)
            try FileSync.sync(path: destination)
        } catch {
            throw .io("cannot copy \(source): \(error)")
        }
    }
}
