import COpenSSL

/// HMAC-SHA256 (RFC 2104, test vectors in RFC 4231) through libcrypto's one-shot `HMAC()`.
public enum HMACSHA256 {
    /// Tag length in bytes.
    public static let tagLength = 32

    /// Returns HMAC-SHA256(`key`, `message`). Any key length is allowed (RFC 2104 §2: longer keys
    /// are hashed first, shorter ones zero-padded).
    public static func authenticate(_ message: some Sequence<UInt8>, key: [UInt8]) -> [UInt8] {
        let bytes = message as? [UInt8] ?? Array(message)
        var tag = [UInt8](repeating: 0, count: tagLength)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBuffer in
            bytes.withUnsafeBytes { messageBuffer in
                tag.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                         messageBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBuffer.count,
                         out.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == UInt32(tagLength), "HMAC-SHA256 failed: \(OpenSSLErrorQueue.drain() ?? "")")
        return tag
    }

    /// Recomputes the tag of `message` and compares it with `tag` in constant time.
    public static func isValid(_ tag: [UInt8], for message: some Sequence<UInt8>, key: [UInt8]) -> Bool {
        ConstantTime.equals(authenticate(message, key: key), tag)
    }
}
