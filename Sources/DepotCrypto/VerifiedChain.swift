import COpenSSL
public import Foundation

/// A chain that validated: leaf first, trust anchor last.
public struct VerifiedChain: Sendable {
    /// The path OpenSSL built, leaf first, trust anchor last.
    public let certificates: [X509Certificate]
    /// The latest `notBefore` in the chain: the chain cannot validate before this instant.
    public let validFrom: Date
    /// The earliest `notAfter` in the chain: the chain does not validate at or after this instant
    /// (libcrypto's `X509_cmp_time` treats `notAfter` itself as expired).
    public let validUntil: Date

    init(built: OpaquePointer?, known: [X509Certificate]) {
        var certificates: [X509Certificate] = []
        let count = built.map { depot_sk_x509_num($0) } ?? 0
        for index in 0..<max(count, 0) {
            guard let pointer = depot_sk_x509_value(built, index) else { continue }
            if let match = known.first(where: { $0.pointer == pointer }) {
                certificates.append(match)
            } else if X509_up_ref(pointer) == 1, let copy = try? X509Certificate(owning: pointer) {
                certificates.append(copy)
            }
        }
        self.certificates = certificates
        validFrom = certificates.map(\.notBefore).max() ?? .distantPast
        validUntil = certificates.map(\.notAfter).min() ?? .distantFuture
    }

    /// True when every certificate of the chain is within its validity period at `time`, by the
    /// same rule libcrypto applied: whole seconds, `validFrom <= time < validUntil`.
    public func isValid(at time: Date) -> Bool {
        let seconds = time.timeIntervalSince1970.rounded(.down)
        return validFrom.timeIntervalSince1970 <= seconds && seconds < validUntil.timeIntervalSince1970
    }
}
