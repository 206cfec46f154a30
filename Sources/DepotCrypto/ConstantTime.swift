import COpenSSL

/// Comparisons whose running time does not depend on where two secrets differ.
public enum ConstantTime {
    /// True when `a` and `b` hold the same bytes. The lengths are compared first (a length is not
    /// secret); equal-length contents are compared with `CRYPTO_memcmp`, which reads every byte
    /// whatever the first difference.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }
}
