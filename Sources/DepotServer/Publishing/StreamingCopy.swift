import DepotCore
import DepotWire
import Glibc

/// Copies a file in one pass while hashing it (whole file and each chunk), then fsyncs the copy.
/// Memory is one 1 MiB buffer whatever the file size.
enum StreamingCopy {
    static func copy(from source: String, to destination: String, chunking: PackChunking) throws(PublishError) -> FileDigest {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .io("cannot read \(source): \(systemMessage(errno))") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw .io("cannot create \(destination): \(systemMessage(errno))") }
        defer { close(output) }
        let digest: FileDigest
        do {
            digest = try FileDigest.stream(input, chunking: chunking) { (piece: UnsafeRawBufferPointer) throws(FileDigest.Failure) in
                var written = 0
                while written < piece.count {
                    let w = write(output, piece.baseAddress! + written, piece.count - written)
                    if w < 0 {
                        if errno == EINTR { continue }
                        throw FileDigest.Failure(description: errno == ENOSPC ? "the content volume is full" : "cannot write \(destination): \(systemMessage(errno))")
                    }
                    written += w
                }
            }
        } catch {
            throw .io("\(source): \(error)")
        }
        guard fsync(output) == 0 else {
            let code = errno
            throw .io(code == ENOSPC ? "the content volume is full" : "cannot fsync \(destination): \(systemMessage(code))")
        }
        return digest
    }
}
