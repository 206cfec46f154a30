public import Foundation
#if canImport(CryptoKit)
import CryptoKit
#endif

/// Computes SHA-256 digests for chunk verification. Injectable so an app can bring its own implementation
/// (and tests can count or break hashing).
public protocol ChunkHasher: Sendable {
    /// The 32-byte SHA-256 digest of `data`.
    func sha256(_ data: Data) throws -> Data
}

/// The default ``ChunkHasher``: the platform's own SHA-256, never a hand-written one.
///
/// - On Apple platforms: CryptoKit's `SHA256`.
/// - On Linux: OpenSSL's libcrypto (`libcrypto.so.3`, as shipped by Debian's `libssl3`), loaded at first
///   use with `dlopen`/`dlsym` and called through its one-shot `SHA256()` function. The library stays
///   Foundation-only (no C module, no `Glibc` import: Foundation re-exports `dlopen` on Linux) while the
///   hashing itself is libcrypto's. When libcrypto cannot be loaded, hashing throws
///   ``DepotClientError/hashUnavailable(_:)``; inject another ``ChunkHasher`` in that case.
public struct SHA256ChunkHasher: ChunkHasher {
    public init() {}

    public func sha256(_ data: Data) throws -> Data {
        #if canImport(CryptoKit)
        return Data(SHA256.hash(data: data))
        #elseif os(Linux)
        return try LibcryptoSHA256.digest(data)
        #else
        throw DepotClientError.hashUnavailable("no SHA-256 implementation on this platform; inject a ChunkHasher")
        #endif
    }
}

#if !canImport(CryptoKit) && os(Linux)
/// libcrypto's `unsigned char *SHA256(const unsigned char *d, size_t n, unsigned char *md)`, found at run time.
private enum LibcryptoSHA256 {
    private typealias Function = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?

    /// Resolved once (Swift's lazy `static let` is thread-safe) and never mutated.
    private static let function: Function? = {
        for name in ["libcrypto.so.3", "libcrypto.so"] {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            if let symbol = dlsym(handle, "SHA256") { return unsafeBitCast(symbol, to: Function.self) }
        }
        return nil
    }()

    static func digest(_ data: Data) throws -> Data {
        guard let function else { throw DepotClientError.hashUnavailable("could not load SHA256 from libcrypto.so.3") }
        var digest = Data(count: 32)
        digest.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                _ = function(input.bindMemory(to: UInt8.self).baseAddress, input.count, out.bindMemory(to: UInt8.self).baseAddress)
            }
        }
        return digest
    }
}
#endif

extension Data {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lowercase hexadecimal.
    package var hexString: String {
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(Self.hexDigits[Int(byte >> 4)])
            out.append(Self.hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when `hex` (digits in either case) spells these bytes: compared digit by digit, without making a string
    /// (a download checks every chunk's digest against the manifest's text this way).
    package func matchesHex(_ hex: String) -> Bool {
        let digits = hex.utf8
        guard digits.count == count * 2 else { return false }
        var next = digits.makeIterator()
        for byte in self {
            guard let high = next.next().flatMap(Self.nibble), let low = next.next().flatMap(Self.nibble),
                  high << 4 | low == byte else { return false }
        }
        return true
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 48...57: digit - 48
        case 97...102: digit - 87
        case 65...70: digit - 55
        default: nil
        }
    }
}
