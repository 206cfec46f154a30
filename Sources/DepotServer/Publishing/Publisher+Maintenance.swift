import DepotCore
import Foundation
import Glibc

/// A version that ``Publisher/prune(keep:pack:dryRun:)`` removed (or would remove).
public struct PrunedVersion: Sendable, Hashable {
    public let pack: String
    public let version: Int
    /// The bytes of its files on disk.
    public let bytes: Int64

    /// `pack/version`.
    public var name: String { "\(pack)/\(version)" }
}

extension Publisher {
    /// Takes a product off sale; owners keep access to its pack. Idempotent.
    public func retire(productID: String) throws(PublishError) {
        try setStatus(.retired, productID: productID)
    }

    /// Puts a retired product on sale again. Idempotent.
    public func unretire(productID: String) throws(PublishError) {
        try setStatus(.live, productID: productID)
    }

    private func setStatus(_ status: ProductStatus, productID: String) throws(PublishError) {
        try withLock { () throws(PublishError) in
            let catalog = try loadCatalog()
            guard let index = catalog.products.firstIndex(where: { $0.id == productID }) else { throw .unknownProduct(productID) }
            guard catalog.products[index].status != status else { return }
            var updated = catalog
            updated.products[index].status = status
            let content = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: ManifestCache())
            try writeCatalog(updated, previous: catalog, previousContent: content)
        }
    }

    /// Deletes the versions older than the newest `keep` that are older than the live one (never the live or a
    /// staged version), of every pack or of `pack` only.
    /// With `dryRun`, deletes nothing and returns what it would delete.
    public func prune(keep: Int, pack only: String? = nil, dryRun: Bool = false) throws(PublishError) -> [PrunedVersion] {
        guard keep >= 1 else { throw .invalid("keep must be at least 1") }
        return try withLock { () throws(PublishError) -> [PrunedVersion] in
            if !dryRun { removeStaleStaging() }
            let content = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: ManifestCache())
            if let only, content.packs[only] == nil { throw .unknownPack(only) }
            var removed: [PrunedVersion] = []
            for pack in content.packs.values.sorted(by: { $0.id < $1.id }) where only == nil || pack.id == only {
                let directory = paths.contentDirectory + "/" + pack.id
                let versions = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                    .compactMap { Identifiers.parseVersion($0) }.sorted(by: >)
                // Never the live version, and never a staged one (newer than the live one, `pack-updates.md` §4).
                for version in versions.dropFirst(keep) where pack.current.map({ version < $0 }) ?? false {
                    let bytes = Self.bytesOnDisk(directory + "/\(version)")
                    if !dryRun {
                        // Out of the live tree in one rename, then deleted at leisure.
                        let trash = stagingDirectory + "/prune-\(pack.id)-\(version)-\(UInt32.random(in: 0...UInt32.max))"
                        do { try DurableFiles.makeDirectory(stagingDirectory) } catch { throw .io("\(error)") }
                        guard rename(directory + "/\(version)", trash) == 0 else {
                            throw .io("cannot remove \(directory)/\(version): \(systemMessage(errno))")
                        }
                        try? DurableFiles.syncDirectory(directory)
                        DurableFiles.removeTree(trash)
                    }
                    removed.append(PrunedVersion(pack: pack.id, version: version, bytes: bytes))
                }
            }
            return removed
        }
    }

    /// The sizes of the regular files below `directory`.
    package static func bytesOnDisk(_ directory: String) -> Int64 {
        FileTree.relativeFiles(under: directory).reduce(Int64(0)) { total, relative in
            var info = stat()
            guard lstat(directory + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return total }
            return total + Int64(info.st_size)
        }
    }
}
