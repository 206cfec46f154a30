public import DepotCore
import DepotCrypto
import DepotWire
import Foundation
import Glibc

/// `depot check`: every problem in `catalog/` and `content/`, with file and field (spec §5).
///
/// Beyond what the server checks on load, this reads every file of every version and compares sizes,
/// SHA-256 and chunk hashes with the manifest, and reports files that the manifest does not list.
public enum DepotCheck {
    public struct Summary: Sendable {
        public var problems: [CatalogProblem]
        public var products = 0
        public var packs = 0
        public var versions = 0
        public var files = 0
        public var bytes: Int64 = 0
    }

    public static func run(paths: DepotPaths) -> Summary {
        let cache = ManifestCache()
        var summary = Summary(problems: [])
        let content = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: cache)
        summary.problems.append(contentsOf: content.problems)
        switch SnapshotLoader.load(paths: paths, cacheControl: "no-cache", manifestCache: cache) {
        case .failure(let problems):
            for problem in problems.problems where !summary.problems.contains(problem) { summary.problems.append(problem) }
        case .success(let snapshot):
            summary.products = snapshot.catalog.products.count
        }
        for problem in ListValidatorRecord.problems(at: paths.listRecordFile) where !summary.problems.contains(problem) {
            summary.problems.append(problem)
        }
        for pack in content.packs.values.sorted(by: { $0.id < $1.id }) {
            summary.packs += 1
            for version in pack.versions.values.sorted(by: { $0.version < $1.version }) {
                summary.versions += 1
                verify(version, problems: &summary.problems, files: &summary.files, bytes: &summary.bytes)
            }
        }
        return summary
    }

    /// Hashes every file of a version and compares with its manifest.
    static func verify(_ version: PackVersion, problems: inout [CatalogProblem], files: inout Int, bytes: inout Int64) {
        let manifest = version.manifest
        let display = version.directory
        for file in manifest.files {
            guard version.files[file.path] != nil else { continue } // already reported as missing or a symlink
            files += 1
            let path = version.directory + "/" + file.path
            switch FileDigest.compute(path: path, chunking: manifest.effectiveChunking) {
            case .failure(let failure):
                problems.append(CatalogProblem(file: display + "/" + file.path, field: "", message: failure.description))
            case .success(let digest):
                bytes += digest.size
                let at = display + "/manifest.json"
                let field = "files[\(manifest.files.firstIndex(of: file)!)]"
                if digest.size != file.size {
                    problems.append(CatalogProblem(file: at, field: field + ".size", message: "says \(file.size) bytes but \(file.path) has \(digest.size)"))
                } else if digest.sha256 != file.sha256 {
                    problems.append(CatalogProblem(file: at, field: field + ".sha256", message: "does not match the bytes of \(file.path)"))
                } else if let bad = digest.chunks.indices.first(where: { $0 >= file.chunks.count || digest.chunks[$0].sha256 != file.chunks[$0].sha256 }) {
                    problems.append(CatalogProblem(file: at, field: field + ".chunks[\(bad)].sha256", message: "does not match the bytes of \(file.path)"))
                }
            }
        }
        let listed = Set(manifest.files.map(\.path))
        for extra in FileTree.relativeFiles(under: version.directory) where extra != "manifest.json" && !listed.contains(extra) {
            problems.append(CatalogProblem(file: display + "/" + extra, field: "", message: "is not listed in the manifest"))
        }
    }
}

/// Relative paths of the regular files (and symlinks) below a directory, sorted bytewise.
package enum FileTree {
    /// The paths below `root`, relative to it, sorted bytewise.
    package static func relativeFiles(under root: String) -> [String] {
        var result: [String] = []
        func walk(_ relative: String) {
            let directory = relative.isEmpty ? root : root + "/" + relative
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
            for name in names {
                let child = relative.isEmpty ? name : relative + "/" + name
                if FileStatus.isDirectory(root + "/" + child) { walk(child) } else { result.append(child) }
            }
        }
        walk("")
        return result.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
