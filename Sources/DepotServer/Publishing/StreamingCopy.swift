import DepotCore
import DepotCrypto
import Glibc

/// Copies a file in one pass while hashing it (whole file and each chunk), then fsyncs the copy.
/// Memory is one 1 MiB buffer whatever the file size.
enum StreamingCopy {
    static func copy(from source: String, to destination: String, chunkSize: Int64) throws(PublishError) -> FileDigest {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .io("cannot read \(source): \(systemMessage(errno))") }
        defer { close(input) }
        _ = posix_fadvise(input, 0, 0, POSIX_FADV_SEQUENTIAL)
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw .io("cannot create \(destination): \(systemMessage(errno))") }
        defer { close(output) }

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
            let n = read(input, buffer.baseAddress, want)
            if n < 0 {
                if errno == EINTR { continue }
                throw .io("cannot read \(source): \(systemMessage(errno))")
            }
            if n == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            var written = 0
            while written < n {
                let w = write(output, piece.baseAddress! + written, n - written)
                if w < 0 {
                    if errno == EINTR { continue }
                    let code = errno
                    throw .io(code == ENOSPC ? "the content volume is full" : "cannot write \(destination): \(systemMessage(code))")
                }
                written += w
            }
            whole.update(piece)
            chunk.update(piece)
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
        guard fsync(output) == 0 else {
            let code = errno
            throw .io(code == ENOSPC ? "the content volume is full" : "cannot fsync \(destination): \(systemMessage(code))")
        }
        return FileDigest(size: size, sha256: Hex.encode(whole.finalize()), chunks: chunks)
    }
}
