import COpenSSL

/// Cryptographically secure random bytes from libcrypto's DRBG (`RAND_bytes`).
public enum SecureRandom {
    /// Returns `count` random bytes. A failing DRBG is unrecoverable, so it traps.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "negative byte count")
        var bytes = [UInt8](repeating: 0, count: count)
        if count == 0 { return bytes }
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(status == 1, "RAND_bytes failed: \(OpenSSLErrorQueue.drain() ?? "")")
        return bytes
    }
}
