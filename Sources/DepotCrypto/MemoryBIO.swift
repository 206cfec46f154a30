import COpenSSL

/// An owned in-memory OpenSSL `BIO` (internal plumbing for PEM and name printing).
final class MemoryBIO {
    let pointer: OpaquePointer

    /// An empty, writable BIO.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.drainingQueue("allocate BIO") }
        pointer = bio
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far.
    var bytes: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = depot_bio_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// Everything written so far, as UTF-8 text.
    var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Runs `body` with a read-only BIO over `bytes` (the BIO never outlives the buffer).
    static func reading<R>(_ bytes: [UInt8], _ body: (OpaquePointer) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                throw CryptoError.drainingQueue("allocate BIO")
            }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }
}
