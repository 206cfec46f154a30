import DepotCore
import DepotWire
import Foundation
import Synchronization

/// Parsed pack versions kept between reloads: a version is immutable, so its manifest is parsed once
/// (and parsed again only if the manifest file itself changes identity).
package final class ManifestCache: Sendable {
    private let entries = Mutex<[String: (identity: String, version: PackVersion)]>([:])

    /// An empty cache.
    package init() {}

    func version(pack: String, version: Int, directory: String, display: String,
                 problems: inout [CatalogProblem]) -> PackVersion? {
        let manifestPath = directory + "/manifest.json"
        let manifestDisplay = display + "/manifest.json"
        guard let identity = FileStatus.identity(manifestPath) else {
            problems.append(CatalogProblem(file: manifestDisplay, field: "", message: "missing"))
            return nil
        }
        if let hit = entries.withLock({ $0[directory] }), hit.identity == identity { return hit.version }
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            problems.append(CatalogProblem(file: manifestDisplay, field: "", message: "cannot be read"))
            return nil
        }
        let bytes = [UInt8](data)
        let manifest: PackManifest
        do {
            manifest = try PackManifest.decode(bytes, file: manifestDisplay)
        } catch {
            problems.append(contentsOf: error.problems)
            return nil
        }
        let found = manifest.consistencyProblems(file: manifestDisplay, expectedPack: pack, expectedVersion: version)
        if !found.isEmpty {
            problems.append(contentsOf: found)
            return nil
        }
        var servable: [String: PackManifest.File] = [:]
        for file in manifest.files {
            if FileStatus.isContainedRegularFile(base: directory, relative: file.path) {
                servable[file.path] = file
            } else {
                problems.append(CatalogProblem(file: display + "/" + file.path, field: "",
                                               message: "listed in the manifest but not a regular file inside the version (missing, or a symlink)"))
            }
        }
        let loaded = PackVersion(pack: pack, version: version, directory: directory, manifest: manifest,
                                 manifestBody: bytes, servableFiles: servable)
        entries.withLock { $0[directory] = (identity, loaded) }
        return loaded
    }

    /// Drops entries whose directories are gone (after a prune).
    func forget(except directories: Set<String>) {
        entries.withLock { table in
            for key in table.keys where !directories.contains(key) { table[key] = nil }
        }
    }
}
