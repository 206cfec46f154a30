import COpenSSL

/// Streaming SHA-256 (FIPS 180-4) over libcrypto's EVP interface.
///
/// One `EVP_MD_CTX` is allocated per hasher and reused: `finalize()` returns the digest and resets
/// the hasher, so a single instance can hash chunk after chunk of a multi-GB file without
/// allocating. Not thread-safe: use one hasher per task.
public final class SHA256 {
    /// Digest length in bytes.
    public static let digestLength = 32

    /// The SHA-256 implementation, fetched once (an implicit fetch on every init costs a lookup).
    nonisolated(unsafe) private static let algorithm: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else {
            fatalError("libcrypto has no SHA256: \(OpenSSLErrorQueue.drain() ?? "")")
        }
        return md
    }()

    private let context: OpaquePointer

    /// Creates a hasher ready for input.
    public init() {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed (out of memory)") }
        self.context = context
        reset()
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Discards any input given so far.
    public func reset() {
        precondition(EVP_DigestInit_ex(context, SHA256.algorithm, nil) == 1, "EVP_DigestInit_ex failed")
    }

    /// Feeds bytes straight from memory (no copy).
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// Feeds any byte sequence (`[UInt8]`, `ArraySlice`, `Data`, `String.UTF8View`, ...).
    /// Contiguous collections are hashed in place; other sequences are copied once.
    public func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if handled == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// Returns the digest of everything fed since the last reset, then resets the hasher.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.digestLength)
        var length: UInt32 = 0
        let status = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        precondition(status == 1 && length == UInt32(SHA256.digestLength), "EVP_DigestFinal_ex failed")
        reset()
        return digest
    }

    /// One-shot digest of `data`.
    public static func hash(_ data: some Sequence<UInt8>) -> [UInt8] {
        let hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }

    /// One-shot digest of raw memory.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
