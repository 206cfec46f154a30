public import Foundation
#if canImport(CryptoKit)
import CryptoKit
#endif

/// The `Depot-Signature` header of Depot's webhooks, for a studio's backend written in Swift:
/// `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (spec app-store-server-api §8).
///
/// A receiver checks the exact bytes it received, before parsing them:
///
/// ```swift
/// guard WebhookSignature.verify(body: requestBody, header: request.headers["Depot-Signature"] ?? "",
///                               secret: webhookSecret) else { return .unauthorized }
/// ```
///
/// The tolerance bounds replays: a signature older (or further in the future) than `tolerance` seconds is
/// refused. Several `v1=` values (a secret being rotated) pass when one of them matches. HMAC comes from
/// CryptoKit on Apple platforms and from libcrypto's one-shot `HMAC()` on Linux (found at run time, like
/// ``SHA256ChunkHasher``); never a hand-written hash.
public enum WebhookSignature {
    /// The header's name.
    public static let headerName = "Depot-Signature"

    /// Why a signature was refused.
    public enum Failure: Error, Sendable, Equatable {
        /// The header is not `t=…,v1=…`.
        case malformed
        /// The timestamp is further from `now` than the tolerance.
        case outsideTolerance
        /// No `v1` value matches the body and the secret.
        case mismatch
        /// No HMAC implementation could be loaded (Linux without libcrypto).
        case unavailable
    }

    /// The header value for `body` signed with `secret` at `timestamp` (unix seconds).
    public static func header(body: Data, secret: String, timestamp: Int) throws(Failure) -> String {
        "t=\(timestamp),v1=\(try signature(body: body, secret: secret, timestamp: timestamp))"
    }

    /// Whether `header` is a valid signature of `body` with `secret`, made within `tolerance` seconds of `now`.
    public static func verify(body: Data, header: String, secret: String, now: Date = Date(),
                              tolerance: TimeInterval = 300) -> Bool {
        (try? check(body: body, header: header, secret: secret, now: now, tolerance: tolerance)) != nil
    }

    /// `verify`, saying why a signature is refused.
    public static func check(body: Data, header: String, secret: String, now: Date = Date(),
                             tolerance: TimeInterval = 300) throws(Failure) {
        var timestamp: Int?
        var candidates: [String] = []
        for element in header.split(separator: ",") {
            let pair = element.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix("t=") {
                guard timestamp == nil, let value = Int(pair.dropFirst(2)) else { throw .malformed }
                timestamp = value
            } else if pair.hasPrefix("v1=") {
                candidates.append(String(pair.dropFirst(3)).lowercased())
            }
        }
        guard let timestamp, !candidates.isEmpty else { throw .malformed }
        guard abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { throw .outsideTolerance }
        let expected = Array(try signature(body: body, secret: secret, timestamp: timestamp).utf8)
        // Compare every candidate in full (no early exit on the first differing byte).
        var matched = false
        for candidate in candidates {
            let bytes = Array(candidate.utf8)
            guard bytes.count == expected.count else { continue }
            var difference: UInt8 = 0
            for index in bytes.indices { difference |= bytes[index] ^ expected[index] }
            if difference == 0 { matched = true }
        }
        guard matched else { throw .mismatch }
    }

    /// The hex HMAC-SHA256 of `"<timestamp>.<body>"` keyed by `secret`.
    static func signature(body: Data, secret: String, timestamp: Int) throws(Failure) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let key = Data(secret.utf8)
        #if canImport(CryptoKit)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))).hexString
        #elseif os(Linux)
        guard let tag = LibcryptoHMAC.sha256(message, key: key) else { throw .unavailable }
        return tag.hexString
        #else
        throw .unavailable
        #endif
    }
}

#if !canImport(CryptoKit) && os(Linux)
/// libcrypto's `HMAC(EVP_MD *, key, key_len, d, n, md, md_len)` with `EVP_sha256()`, found at run time.
private enum LibcryptoHMAC {
    private typealias Digest = @convention(c) () -> OpaquePointer?
    private typealias Function = @convention(c) (
        OpaquePointer?, UnsafeRawPointer?, Int32, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?
    ) -> UnsafeMutablePointer<UInt8>?

    /// Resolved once (Swift's lazy `static let` is thread-safe) and never mutated.
    private static let functions: (digest: Digest, hmac: Function)? = {
        for name in ["libcrypto.so.3", "libcrypto.so"] {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            if let digest = dlsym(handle, "EVP_sha256"), let hmac = dlsym(handle, "HMAC") {
                return (unsafeBitCast(digest, to: Digest.self), unsafeBitCast(hmac, to: Function.self))
            }
        }
        return nil
    }()

    static func sha256(_ message: Data, key: Data) -> Data? {
        guard let functions, let digest = functions.digest() else { return nil }
        var tag = Data(count: 32)
        var length: UInt32 = 0
        let result = tag.withUnsafeMutableBytes { out in
            key.withUnsafeBytes { keyBytes in
                message.withUnsafeBytes { input in
                    functions.hmac(digest, keyBytes.baseAddress, Int32(keyBytes.count), input.bindMemory(to: UInt8.self).baseAddress,
                                   input.count, out.bindMemory(to: UInt8.self).baseAddress, &length)
                }
            }
        }
        return result != nil && length == 32 ? tag : nil
    }
}
#endif
