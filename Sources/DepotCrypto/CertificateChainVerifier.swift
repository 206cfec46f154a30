import COpenSSL
public import Foundation

/// Validates a certificate chain up to configured trust anchors with libcrypto's
/// `X509_verify_cert` (RFC 5280 §6 path validation: signatures, validity at a chosen time,
/// CA basic constraints and path lengths).
///
/// Only the configured roots are trusted: intermediates are untrusted input used to build the
/// path, and partial chains (ending at a trusted non-root) are not allowed. A certificate that a
/// caller merely received (such as a JWS `x5c[2]`) must not be passed as an intermediate or root.
public struct CertificateChainVerifier: Sendable {
    /// The trust anchors.
    public let trustedRoots: [X509Certificate]
    private let store: TrustStore

    /// Creates a verifier trusting exactly `trustedRoots`.
    public init(trustedRoots: [X509Certificate]) {
        self.trustedRoots = trustedRoots
        store = TrustStore(roots: trustedRoots)
    }

    /// Validates `leaf` through `intermediates` to one of the trusted roots as of `time`
    /// (whole seconds). libcrypto counts a certificate valid from `notBefore` inclusive up to
    /// `notAfter` exclusive: at the very second of `notAfter` it reports "certificate has expired".
    public func verify(leaf: X509Certificate, intermediates: [X509Certificate],
                       at time: Date) -> Result<VerifiedChain, ChainVerificationError> {
        OpenSSLErrorQueue.clear()
        guard let context = X509_STORE_CTX_new() else {
            return .failure(ChainVerificationError(code: -1, depth: 0, reason: "out of memory"))
        }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = depot_sk_x509_new_null() else {
            return .failure(ChainVerificationError(code: -1, depth: 0, reason: "out of memory"))
        }
        defer { depot_sk_x509_free(untrusted) }  // the certificates stay owned by their wrappers
        for intermediate in intermediates {
            guard depot_sk_x509_push(untrusted, intermediate.pointer) > 0 else {
                return .failure(ChainVerificationError(code: -1, depth: 0, reason: "out of memory"))
            }
        }
        guard X509_STORE_CTX_init(context, store.pointer, leaf.pointer, untrusted) == 1 else {
            return .failure(ChainVerificationError(code: -1, depth: 0,
                                                   reason: OpenSSLErrorQueue.drain() ?? "X509_STORE_CTX_init failed"))
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970.rounded(.down)))
        X509_VERIFY_PARAM_clear_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))

        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown error"
            OpenSSLErrorQueue.clear()
            return .failure(ChainVerificationError(code: Int(code), depth: Int(depth), reason: reason))
        }
        return .success(VerifiedChain(built: X509_STORE_CTX_get0_chain(context),
                                      known: [leaf] + intermediates + trustedRoots))
    }
}

/// An owned `X509_STORE` holding the trust anchors. `@unchecked Sendable`: it is filled once in
/// init and then only read; libcrypto locks its internal lookups.
private final class TrustStore: @unchecked Sendable {
    let pointer: OpaquePointer

    init(roots: [X509Certificate]) {
        guard let store = X509_STORE_new() else { fatalError("X509_STORE_new failed (out of memory)") }
        pointer = store
        for root in roots {
            _ = X509_STORE_add_cert(store, root.pointer)  // takes its own reference; duplicates are harmless
        }
        OpenSSLErrorQueue.clear()
    }

    deinit { X509_STORE_free(pointer) }
}
