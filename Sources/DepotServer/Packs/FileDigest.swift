import DepotCore
package import DepotWire
import DepotCrypto
import Dispatch
import Glibc

/// One block handed to two hashers on two threads.
/// `@unchecked Sendable`: each hasher is used by exactly one of the two iterations, and the bytes are read only.
private struct SharedPiece: @unchecked Sendable {
    let piece: UnsafeRawBufferPointer
    let hashers: (SHA256, SHA256)

    func update(_ index: Int) {
        (index == 0 ? hashers.0 : hashers.1).update(piece)
    }
}

/// One block for the file's hasher and the chunk cutter on two threads.
/// `@unchecked Sendable`: each object is used by exactly one of the two iterations, and the bytes are read only.
private struct SharedBlock: @unchecked Sendable {
    let piece: UnsafeRawBufferPointer
    let whole: SHA256
    let cutter: ChunkCutter

    func run(_ index: Int) {
        if index == 0 { whole.update(piece) } else { cutter.consume(piece) }
    }
}

/// Finds content-defined boundaries in a stream of blocks and hashes each chunk.
/// `@unchecked Sendable`: used by one thread at a time (one iteration of a block, then the caller).
private final class ChunkCutter: @unchecked Sendable {
    var chunker: ContentChunker
    let hasher = SHA256()
    var chunks: [PackManifest.Chunk] = []
    /// Offset of the chunk in progress, and its bytes so far.
    var chunkStart: Int64 = 0
    var chunkFill: Int64 = 0

    init(chunker: ContentChunker) {
        self.chunker = chunker
    }

    func consume(_ piece: UnsafeRawBufferPointer) {
        var start = 0
        while start < piece.count {
            let cut = chunker.boundary(in: piece, from: start)
            let end = cut ?? piece.count
            hasher.update(UnsafeRawBufferPointer(rebasing: piece[start..<end]))
            chunkFill += Int64(end - start)
            if cut != nil { close() }
            start = end
        }
    }

    private func close() {
        chunks.append(PackManifest.Chunk(offset: chunkStart, length: chunkFill, sha256: Hex.encode(hasher.finalize())))
        chunkStart += chunkFill
        chunkFill = 0
    }

    func finish() -> [PackManifest.Chunk] {
        if chunkFill > 0 { close() }
        return chunks
    }
}

/// Size, SHA-256 and per-chunk SHA-256 of a file, computed in one streaming pass with constant memory.
package struct FileDigest: Sendable, Equatable {
    /// Why a file could not be read (or written, when copying).
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package internal(set) var size: Int64
    package internal(set) var sha256: String
    package internal(set) var chunks: [PackManifest.Chunk]

    /// The digest of the file at `path`, in chunks of `chunkSize` bytes.
    package static func compute(path: String, chunkSize: Int64) -> Result<FileDigest, Failure> {
        compute(path: path, chunking: .fixed(size: chunkSize))
    }

    static func compute(path: String, chunking: PackChunking) -> Result<FileDigest, Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Failure(description: "cannot be read: \(systemMessage(errno))")) }
        defer { close(fd) }
        do {
            return .success(try stream(fd, chunking: chunking) { _ in })
        } catch {
            return .failure(error)
        }
    }

    /// ``stream(_:chunkSize:each:)`` for either chunking method.
    static func stream(_ fd: Int32, chunking: PackChunking,
                       each: (UnsafeRawBufferPointer) throws(Failure) -> Void) throws(Failure) -> FileDigest {
        switch chunking {
        case .fixed(let size): try stream(fd, chunkSize: size, each: each)
        case .content(_, let average, _): try streamContentDefined(fd, chunker: ContentChunker(average: average), each: each)
        }
    }

    /// Reads `fd` to its end in 1 MiB blocks, cutting content-defined chunks (``ContentChunker``): the file's hash
    /// runs on one core while the other finds the boundaries of the same block and hashes its chunks.
    static func streamContentDefined(_ fd: Int32, chunker start: ContentChunker,
                                     each: (UnsafeRawBufferPointer) throws(Failure) -> Void) throws(Failure) -> FileDigest {
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        let blockSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 16)
        defer { buffer.deallocate() }
        let whole = SHA256()
        let cutter = ChunkCutter(chunker: start)
        var size: Int64 = 0
        while true {
            let n = read(fd, buffer.baseAddress, blockSize)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "read failed: \(systemMessage(errno))")
            }
            if n == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            try each(piece)
            if n >= 64 * 1024 {
                let shared = SharedBlock(piece: piece, whole: whole, cutter: cutter)
                DispatchQueue.concurrentPerform(iterations: 2) { i in shared.run(i) }
            } else {
                whole.update(piece)
                cutter.consume(piece)
            }
            size += Int64(n)
        }
        return FileDigest(size: size, sha256: Hex.encode(whole.finalize()), chunks: cutter.finish())
    }

    /// Reads `fd` to its end in blocks of at most 1 MiB that never cross a chunk boundary, hashing the whole file
    /// and each chunk, and hands every block to `each` (a copy writes it out).
    static func stream(_ fd: Int32, chunkSize: Int64,
                       each: (UnsafeRawBufferPointer) throws(Failure) -> Void) throws(Failure) -> FileDigest {
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        let blockSize = Int(min(chunkSize, 1 << 20))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 16)
        defer { buffer.deallocate() }
        let whole = SHA256()
        let chunk = SHA256()
        var chunks: [PackManifest.Chunk] = []
        var size: Int64 = 0
        var chunkStart: Int64 = 0
        var chunkFill: Int64 = 0
        while true {
            let want = Int(min(Int64(blockSize), chunkSize - chunkFill))
            let n = read(fd, buffer.baseAddress, want)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "read failed: \(systemMessage(errno))")
            }
            if n == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            try each(piece)
            // The file's hash and the chunk's hash read the same bytes: on two cores at once.
            if n >= 64 * 1024 {
                let shared = SharedPiece(piece: piece, hashers: (whole, chunk))
                DispatchQueue.concurrentPerform(iterations: 2) { i in shared.update(i) }
            } else {
                whole.update(piece)
                chunk.update(piece)
            }
            size += Int64(n)
            chunkFill += Int64(n)
            if chunkFill == chunkSize {
                chunks.append(PackManifest.Chunk(offset: chunkStart, length: chunkFill, sha256: Hex.encode(chunk.finalize())))
                chunkStart += chunkFill
                chunkFill = 0
            }
        }
        if chunkFill > 0 {
            chunks.append(PackManifest.Chunk(offset: chunkStart, length: chunkFill, sha256: Hex.encode(chunk.finalize())))
        }
        return FileDigest(size: size, sha256: Hex.encode(whole.finalize()), chunks: chunks)
    }
}
