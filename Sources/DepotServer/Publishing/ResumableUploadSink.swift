import DepotCrypto
import DepotWire
import Foundation
import Glibc
import HTTP
import Platform
import Server

/// One piece of a resumable admin upload (`PUT` with `Content-Range`): appended at its offset to the file's
/// partial `.resume-<path hash>-<total>` in the version's upload directory, which survives a dropped connection
/// and a restart. The piece must start where the partial ends (else `409` with `Upload-Offset`). The piece that
/// ends the file syncs it, checks the whole file against `X-Content-SHA256`/`Digest` when one is sent, and moves it
/// to its final staging name (`201` with the upload answer); earlier pieces are answered `200` with the
/// ``UploadStatus``.
final class ResumableUploadSink: RequestBodySink, @unchecked Sendable {
    // @unchecked: the mutable state below is touched only on `queue`.
    private let queue = BlockingQueue(label: "depot.upload.resumable")
    private let location: ResumableUpload
    private let range: ContentRange
    private let expectedSHA256: [UInt8]?
    private let space: any VolumeSpace
    private let volumePath: String
    private let reserve: Int64
    private let begin: @Sendable () -> AdminFailure?
    private let end: @Sendable () -> Void
    private var fd: Int32 = -1
    private var written: Int64 = 0
    private var failure: AdminFailure?
    private var counted = false
    private var freeAtStart: Int64 = -1

    init(location: ResumableUpload, range: ContentRange, expectedSHA256: [UInt8]?, space: any VolumeSpace, volumePath: String,
         reserve: Int64, begin: @escaping @Sendable () -> AdminFailure?, end: @escaping @Sendable () -> Void) {
        self.location = location
        self.range = range
        self.expectedSHA256 = expectedSHA256
        self.space = space
        self.volumePath = volumePath
        self.reserve = reserve
        self.begin = begin
        self.end = end
    }

    /// Claims the path, opens the partial and checks that the piece starts where it ends.
    private func prepare() -> AdminFailure? {
        if let failure { return failure }
        if fd >= 0 { return nil }
        if !counted {
            if let refusal = begin() {
                failure = refusal
                return refusal
            }
            counted = true
        }
        do {
            try DurableFiles.makeDirectory(location.directory)
            try DurableFiles.makeDirectory((location.finalPath as NSString).deletingLastPathComponent)
        } catch {
            let code = errno
            failure = code == ENOTDIR || code == EEXIST ? .pathConflict(location.relativePath) : .storage("Cannot create the staging directory: \(error)")
            return failure
        }
        // A new upload of the path (from byte 0) replaces what an upload of another size left.
        if range.first == 0 { location.removePartials(except: range.total) }
        let path = location.partialPath(total: range.total)
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            failure = .storage("Cannot create the staging file: \(systemMessage(errno))")
            return failure
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            failure = .storage("Cannot examine the staging file: \(systemMessage(errno))")
            return failure
        }
        let held = Int64(info.st_size)
        guard held == range.first else {
            failure = .uploadOffsetMismatch(receivedBytes: held)
            return failure
        }
        return nil
    }

    func consume(_ bytes: [UInt8]) async throws(ResponseError) {
        let outcome: AdminFailure? = await queue.run { [self] in
            if let failure = prepare() { return failure }
            let reported = space.freeBytes(at: volumePath)
            if freeAtStart < 0 { freeAtStart = reported }
            let free = min(reported, freeAtStart - written)
            if free - Int64(bytes.count) < reserve {
                failure = .insufficientStorage(requiredBytes: range.total - range.first - written + reserve, freeBytes: free)
                return failure
            }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + offset, $0.count - offset, off_t(range.first + written) + off_t(offset)) }
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno == ENOSPC ? .insufficientStorage(requiredBytes: range.total - range.first + reserve, freeBytes: free)
                        : .storage("Cannot write the upload: \(systemMessage(errno))")
                    return failure
                }
                offset += n
            }
            written += Int64(bytes.count)
            return nil
        }
        if let outcome { throw ResponseError(Self.refusal(outcome)) }
    }

    func finish() async -> Response {
        await queue.run { [self] in
            defer { release() }
            if let failure = prepare() { return Self.refusal(failure) }
            guard range.completes else {
                close(fd)
                fd = -1
                let status = UploadStatus(path: location.relativePath, receivedBytes: range.first + written, size: range.total, complete: false)
                return JSONAnswer.response(status: 200, status, .adminUpload, headers: ["Upload-Offset": String(range.first + written)])
            }
            let synced = fsync(fd) == 0
            close(fd)
            fd = -1
            let partial = location.partialPath(total: range.total)
            guard synced, let digest = Self.digest(of: partial) else {
                return Self.refusal(.storage("Cannot read back the upload: \(systemMessage(errno))"))
            }
            if let expectedSHA256, expectedSHA256 != digest {
                unlink(partial)
                return Self.refusal(.digestMismatch)
            }
            guard rename(partial, location.finalPath) == 0 else {
                let code = errno
                if code == ENOTDIR || code == EISDIR { return Self.refusal(.pathConflict(location.relativePath)) }
                return Self.refusal(.storage("Cannot store the upload: \(systemMessage(code))"))
            }
            try? DurableFiles.syncDirectory((location.finalPath as NSString).deletingLastPathComponent)
            try? DurableFiles.syncDirectory(location.directory)
            return JSONAnswer.response(status: 201, UploadAnswer(path: location.relativePath, size: range.total, sha256: Hex.encode(digest)),
                                       .adminUpload)
        }
    }

    /// The connection is gone: what arrived stays in the partial, for the next piece to continue from.
    func abort() async {
        await queue.run { [self] in
            if fd >= 0 {
                close(fd)
                fd = -1
            }
            release()
        }
    }

    private func release() {
        if counted {
            counted = false
            end()
        }
    }

    private static func refusal(_ failure: AdminFailure) -> Response { failure.answer.response(.adminUpload) }

    /// SHA-256 of a whole file, read in 1 MiB pieces.
    static func digest(of path: String) -> [UInt8]? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { return hasher.finalize() }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }
}
