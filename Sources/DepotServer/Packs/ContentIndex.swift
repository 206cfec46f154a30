import DepotCore
import Foundation
import Glibc

/// Everything under `content/`: packs, their versions and manifests, and what is wrong with them.
package struct ContentIndex: Sendable {
    /// The packs, by ID.
    package var packs: [String: PackEntry] = [:]
    /// Problems found while loading (the affected pack or version is left out).
    var problems: [CatalogProblem] = []

    /// The name of the directory that publishing stages into (never a pack).
    static let stagingDirectoryName = ".staging"

    /// Loads every pack. `cache` carries parsed manifests over from the previous load (keyed by path and
    /// file identity) so an unchanged manifest is not parsed again.
    static func load(contentDirectory: String, displayPrefix: String, cache: ManifestCache) -> ContentIndex {
        var index = ContentIndex()
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: contentDirectory) else {
            index.problems.append(CatalogProblem(file: displayPrefix, field: "", message: "cannot read the content directory"))
            return index
        }
        for name in names.sorted() where !name.hasPrefix(".") {
            let packDirectory = contentDirectory + "/" + name
            guard FileStatus.isDirectory(packDirectory) else { continue }
            let display = displayPrefix + "/" + name
            guard Identifiers.isValidPackID(name) else {
                index.problems.append(CatalogProblem(file: display, field: "", message: "\"\(name)\" is not a valid pack ID"))
                continue
            }
            index.packs[name] = loadPack(id: name, directory: packDirectory, display: display, cache: cache, problems: &index.problems)
        }
        return index
    }

    private static func loadPack(id: String, directory: String, display: String, cache: ManifestCache,
                                 problems: inout [CatalogProblem]) -> PackEntry {
        var current: Int?
        if let data = FileManager.default.contents(atPath: directory + "/current") {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if let version = Identifiers.parseVersion(text) {
                current = version
            } else {
                problems.append(CatalogProblem(file: display + "/current", field: "", message: "\"\(text)\" is not a version number"))
            }
        } else {
            problems.append(CatalogProblem(file: display + "/current", field: "", message: "missing: the pack has no live version"))
        }
        var versions: [Int: PackVersion] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names {
            guard let version = Identifiers.parseVersion(name) else { continue }
            let versionDirectory = directory + "/" + name
            guard FileStatus.isDirectory(versionDirectory) else { continue }
            let versionDisplay = display + "/" + name
            if let loaded = cache.version(pack: id, version: version, directory: versionDirectory,
                                          display: versionDisplay, problems: &problems) {
                versions[version] = loaded
            }
        }
        if let current, versions[current] == nil {
            problems.append(CatalogProblem(file: display + "/current", field: "",
                                           message: "names version \(current), which is missing or invalid"))
        }
        return PackEntry(id: id, current: current, versions: versions)
    }
}

/// File-system facts without following symlinks.
package enum FileStatus {
    /// Whether `path` is a directory (a symlink to one is not).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// A fingerprint of a file's identity and content version (device, inode, size, mtime), or nil if absent.
    static func identity(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// Modification time in whole seconds, or nil.
    static func modificationTime(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec)
    }

    /// True when `relative` names a regular file under `base` and no component of it is a symlink.
    static func isContainedRegularFile(base: String, relative: String) -> Bool {
        containedRegularFile(base: base, relative: relative) != nil
    }

    /// Device and inode of `relative` under `base` when `base` and every component before the last are real
    /// directories and the last a regular file — no symlink anywhere from `base` down; nil otherwise.
    static func containedRegularFile(base: String, relative: String) -> FileIdentity? {
        guard isDirectory(base) else { return nil }
        var path = base
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        for (i, part) in parts.enumerated() {
            path += "/" + part
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            let kind = info.st_mode & S_IFMT
            if i == parts.count - 1 {
                return kind == S_IFREG ? FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) : nil
            }
            guard kind == S_IFDIR else { return nil }
        }
        return nil
    }
}

/// Which file a path or descriptor refers to.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
}
