import DepotCore
import DepotCrypto
import DepotWire
import Foundation
import Glibc
import Platform
import HTTP
import Server

/// Streams one admin upload into the staging area: each piece is written and hashed on a private queue
/// while the connection waits (back-pressure), so memory stays at one piece whatever the file size.
/// The file appears under its final staging name only when complete (and its digest matches, if one was sent).
final class UploadSink: RequestBodySink, @unchecked Sendable {
    // @unchecked: the mutable state below is touched only on `queue`.
    private let queue: BlockingQueue
    private let partialPath: String
    private let finalPath: String
    private let relativePath: String
    private let expectedSHA256: [UInt8]?
    private let space: any VolumeSpace
    private let volumePath: String
    private let reserve: Int64
    private var fd: Int32 = -1
    private var written: Int64 = 0
    private let hasher = SHA256()
    private var failed = false
    /// Free bytes when the upload started: what this upload writes is subtracted from it, so the check holds
    /// even where the file system reports free space lazily.
    private var freeAtStart: Int64 = -1
    /// Counts this upload as in flight for its version (false: a publish of that version holds it), and
    /// stops counting it. `begin` runs before the first byte is written, `end` once when the upload ends.
    private let begin: @Sendable () -> Bool
    private let end: @Sendable () -> Void
    private var counted = false

    init(partialPath: String, finalPath: String, relativePath: String, expectedSHA256: [UInt8]?, space: any VolumeSpace,
         volumePath: String, reserve: Int64, begin: @escaping @Sendable () -> Bool = { true }, end: @escaping @Sendable () -> Void = {}) {
        self.begin = begin
        self.end = end
        self.partialPath = partialPath
        self.finalPath = finalPath
        self.relativePath = relativePath
        self.expectedSHA256 = expectedSHA256
        self.space = space
        self.volumePath = volumePath
        self.reserve = reserve
        queue = BlockingQueue(label: "depot.upload")
    }

    /// Creates the directories and the partial file, on the sink's queue (directory fsyncs never run on an
    /// event loop). Called before the first piece is written; nil when ready.
    private func prepare() -> AdminFailure? {
        if fd >= 0 { return nil }
        if failed { return .storage("The upload failed.") }
        if !counted {
            guard begin() else {
                failed = true
                return .publishInProgress
            }
            counted = true
        }
        do {
            try DurableFiles.makeDirectory((finalPath as NSString).deletingLastPathComponent)
        } catch {
            let code = errno
            failed = true
            // A concurrent upload put a file where this one needs a directory.
            if code == ENOTDIR || code == EEXIST { return .pathConflict(relativePath) }
            return .storage("Cannot create the staging directory: \(error)")
        }
        fd = Glibc.open(partialPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            failed = true
            return .storage("Cannot create the staging file: \(systemMessage(errno))")
        }
        return nil
    }

    func consume(_ bytes: [UInt8]) async throws(ResponseError) {
        let outcome: AdminFailure? = await queue.run { [self] in
            if let failure = prepare() { return failure }
            // Keep the reserve free even when the size was not declared (chunked uploads).
            let reported = space.freeBytes(at: volumePath)
            if freeAtStart < 0 { freeAtStart = reported }
            let free = min(reported, freeAtStart - written)
            if free - Int64(bytes.count) < reserve {
                failed = true
                return .insufficientStorage(requiredBytes: written + Int64(bytes.count) + reserve, freeBytes: freeAtStart)
            }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    if errno == ENOSPC { return .insufficientStorage(requiredBytes: written + Int64(bytes.count) + reserve, freeBytes: free) }
                    return .storage("Cannot write the upload: \(systemMessage(errno))")
                }
                offset += n
            }
            hasher.update(bytes)
            written += Int64(bytes.count)
            return nil
        }
        if let outcome { throw ResponseError(outcome.answer.response(.adminUpload)) }
    }

    /// Stops counting the upload as in flight (on `queue`), once.
    private func stopCounting() {
        if counted {
            counted = false
            end()
        }
    }

    func finish() async -> Response {
        await queue.run { [self] in
            defer { stopCounting() }
            if let failure = prepare() { return failure.answer.response(.adminUpload) }
            guard fd >= 0, !failed else { return AdminFailure.storage("The upload failed.").answer.response(.adminUpload) }
            let digest = hasher.finalize()
            let synced = fsync(fd) == 0
            close(fd)
            fd = -1
            if let expectedSHA256, expectedSHA256 != digest {
                unlink(partialPath)
                return AdminFailure.digestMismatch.answer.response(.adminUpload)
            }
            guard synced, rename(partialPath, finalPath) == 0 else {
                let code = synced ? errno : EIO
                unlink(partialPath)
                if code == ENOTDIR || code == EISDIR {
                    // Another upload made a file where this path needs a directory, or the other way round.
                    return AdminFailure.pathConflict(relativePath).answer.response(.adminUpload)
                }
                return AdminFailure.storage("Cannot store the upload: \(systemMessage(code))").answer.response(.adminUpload)
            }
            try? DurableFiles.syncDirectory((finalPath as NSString).deletingLastPathComponent)
            return JSONAnswer.response(status: 201, UploadAnswer(path: relativePath, size: written, sha256: Hex.encode(digest)), .adminUpload)
        }
    }

    func abort() async {
        await queue.run { [self] in
            if fd >= 0 { close(fd); fd = -1 }
            unlink(partialPath)
            stopCounting()
        }
    }
}
