import CZlib

/// zlib's Swift face: gzip compression of bytes in memory (the product lists, made once per catalog change).
enum Gzip {
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { "zlib error \(code)" }
    }

    /// Compresses `input` into a gzip member (RFC 1952) at the best compression level.
    static func compress(_ input: [UInt8], level: Int32 = 9) throws -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        var status = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw Failure(code: status) }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        var input = input
        let produced: Int = input.withUnsafeMutableBufferPointer { inPtr in
            output.withUnsafeMutableBufferPointer { outPtr in
                stream.next_in = inPtr.baseAddress
                stream.avail_in = UInt32(inPtr.count)
                stream.next_out = outPtr.baseAddress
                stream.avail_out = UInt32(outPtr.count)
                status = deflate(&stream, Z_FINISH)
                return outPtr.count - Int(stream.avail_out)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(code: status) }
        output.removeSubrange(produced...)
        return output
    }

    /// Decompresses a gzip member (used by tests and checks).
    static func decompress(_ input: [UInt8], limit: Int = 64 << 20) throws -> [UInt8] {
        var stream = z_stream()
        var status = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw Failure(code: status) }
        defer { inflateEnd(&stream) }
        var result: [UInt8] = []
        var input = input
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        try input.withUnsafeMutableBufferPointer { inPtr in
            stream.next_in = inPtr.baseAddress
            stream.avail_in = UInt32(inPtr.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { outPtr in
                    stream.next_out = outPtr.baseAddress
                    stream.avail_out = UInt32(outPtr.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return outPtr.count - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END else { throw Failure(code: status) }
                result.append(contentsOf: chunk[0..<produced])
                if result.count > limit { throw Failure(code: Z_BUF_ERROR) }
            } while status != Z_STREAM_END
        }
        return result
    }
}
