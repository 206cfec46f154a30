import DepotCrypto
import DepotWire
import Foundation
import Glibc

/// Where a resumable upload of one file lives: its partial `<version dir>/.resume-<SHA-256 of the path, 32 hex>-<total>`
/// (a dot-name, so it is never a pack file, kept across restarts and refused by publish while it exists) and its
/// final staging name.
struct ResumableUpload: Sendable {
    /// `content/.staging/uploads/<pack>/<version>`.
    let directory: String
    /// The file's path inside the version.
    let relativePath: String

    var finalPath: String { directory + "/" + relativePath }

    private var prefix: String { ".resume-" + Hex.encode(Array(SHA256.hash(Array(relativePath.utf8)).prefix(16))) + "-" }

    func partialPath(total: Int64) -> String { directory + "/" + prefix + String(total) }

    /// The partials of this path, with their totals.
    func partials() -> [(path: String, total: Int64)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name in
            guard name.hasPrefix(prefix), let total = Int64(name.dropFirst(prefix.count)) else { return nil }
            return (directory + "/" + name, total)
        }
    }

    func removePartials(except total: Int64) {
        for partial in partials() where partial.total != total { unlink(partial.path) }
    }

    /// What the server holds of this file: an interrupted upload (received bytes of its total), a complete
    /// upload, or nothing (nil). Blocking: run it on a queue.
    func status() -> UploadStatus? {
        if let partial = partials().first {
            var info = stat()
            let received = stat(partial.path, &info) == 0 ? Int64(info.st_size) : 0
            return UploadStatus(path: relativePath, receivedBytes: received, size: partial.total, complete: false)
        }
        var info = stat()
        guard lstat(finalPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return UploadStatus(path: relativePath, receivedBytes: Int64(info.st_size), size: Int64(info.st_size), complete: true)
    }
}
