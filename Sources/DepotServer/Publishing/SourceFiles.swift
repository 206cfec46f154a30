import DepotCore
import DepotWire
import Foundation
import Glibc

/// The files a publish copies: each FILE argument by its name, each DIR argument by its contents.
enum SourceFiles {
    struct Source: Equatable {
        var relative: String
        var absolute: String
        var size: Int64
    }

    static func collect(_ arguments: [String]) throws(PublishError) -> [Source] {
        guard !arguments.isEmpty else { throw .invalid("nothing to publish: give files or directories") }
        var sources: [Source] = []
        for argument in arguments {
            var info = stat()
            guard stat(argument, &info) == 0 else { throw .invalid("\(argument): \(systemMessage(errno))") }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                let name = (argument as NSString).lastPathComponent
                sources.append(Source(relative: name, absolute: argument, size: Int64(info.st_size)))
            case S_IFDIR:
                try walk(root: argument, relative: "", into: &sources)
            default:
                throw .invalid("\(argument): not a regular file or directory")
            }
        }
        var seen = Set<String>()
        for source in sources {
            guard Identifiers.isSafeRelativePath(source.relative) else {
                throw .invalid("\(source.absolute): \"\(source.relative)\" cannot be a pack path (control characters, backslash, . or ..)")
            }
            guard source.relative != "manifest.json" else { throw .invalid("\(source.absolute): manifest.json is reserved for the manifest") }
            guard seen.insert(source.relative).inserted else { throw .invalid("\(source.relative) is given twice") }
        }
        guard !sources.isEmpty else { throw .invalid("nothing to publish: the directories are empty") }
        return sources.sorted { $0.relative.utf8.lexicographicallyPrecedes($1.relative.utf8) }
    }

    private static func walk(root: String, relative: String, into sources: inout [Source]) throws(PublishError) {
        let directory = relative.isEmpty ? root : root + "/" + relative
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw .invalid("\(directory): cannot be read")
        }
        for name in names {
            let child = relative.isEmpty ? name : relative + "/" + name
            let path = root + "/" + child
            var link = stat()
            guard lstat(path, &link) == 0 else { throw .invalid("\(path): \(systemMessage(errno))") }
            switch link.st_mode & S_IFMT {
            case S_IFDIR:
                try walk(root: root, relative: child, into: &sources)
            case S_IFREG:
                sources.append(Source(relative: child, absolute: path, size: Int64(link.st_size)))
            case S_IFLNK:
                // A symlink's target is copied as a file; linked directories are refused (no cycles, no surprises).
                var target = stat()
                guard stat(path, &target) == 0, (target.st_mode & S_IFMT) == S_IFREG else {
                    throw .invalid("\(path): a symlink to something other than a regular file")
                }
                sources.append(Source(relative: child, absolute: path, size: Int64(target.st_size)))
            default:
                throw .invalid("\(path): not a regular file or directory")
            }
        }
    }
}

/// fsync for files and directory trees.
enum FileSync {
    static func sync(path: String) throws(DurableFiles.Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DurableFiles.Failure("cannot open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw DurableFiles.Failure("cannot fsync", path) }
    }

    /// fsyncs every directory of a tree, deepest first, so every entry in it is durable.
    static func syncDirectories(under root: String) throws(DurableFiles.Failure) {
        var directories: [String] = []
        func walk(_ path: String) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names where FileStatus.isDirectory(path + "/" + name) { walk(path + "/" + name) }
            directories.append(path)
        }
        walk(root)
        for directory in directories { try DurableFiles.syncDirectory(directory) }
    }
}
