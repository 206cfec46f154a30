import Foundation
import Glibc

/// File operations that survive a crash: write to a temporary file, fsync, rename, fsync the directory.
package enum DurableFiles {
    /// Which operation failed on which path, and why.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
        init(_ what: String, _ path: String, errno code: Int32 = errno) {
            description = "\(what) \(path): \(systemMessage(code))"
        }
    }

    /// Replaces `path` atomically with `bytes`.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/." + (path as NSString).lastPathComponent + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure("cannot create", temporary) }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        do {
            try writeAll(fd, bytes, path: temporary)
        } catch {
            close(fd)
            throw error
        }
        guard fsync(fd) == 0 else { let e = errno; close(fd); throw Failure("cannot fsync", temporary, errno: e) }
        close(fd)
        guard rename(temporary, path) == 0 else { throw Failure("cannot rename into", path) }
        ok = true
        try syncDirectory(directory)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure("cannot write", path)
            }
            offset += n
        }
    }

    /// fsync a directory so a rename or a new entry in it is durable.
    static func syncDirectory(_ path: String) throws(Failure) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure("cannot open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure("cannot fsync", path) }
    }

    /// Creates a directory (and missing parents), fsyncing each parent that gained an entry.
    package static func makeDirectory(_ path: String) throws(Failure) {
        if FileStatus.isDirectory(path) { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try makeDirectory(parent) }
        if mkdir(path, 0o755) != 0 && (errno != EEXIST || !FileStatus.isDirectory(path)) { throw Failure("cannot create", path) }
        if !parent.isEmpty { try syncDirectory(parent) }
    }

    /// Removes a tree (staging leftovers, pruned versions). Best effort.
    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
