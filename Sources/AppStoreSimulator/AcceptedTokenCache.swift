import DepotCrypto
import Synchronization

/// Bearer tokens the simulated store has already accepted, by their exact text, so that a token a
/// server reuses for minutes (as Apple allows, and Depot does) is not checked from scratch on every
/// call: the ES256 verification and JSON decoding of the token were a large part of the store's CPU
/// per call in the benchmark, where the store shares the cores with Depot. A real App Store is not on
/// our cores.
///
/// Only what cannot change for the same text is remembered (signature, header, `aud`, `bid`, `iss`
/// against the key, the lifetime); what can change is checked again on every call: the key named by
/// `kid` must still be accepted and be the very key that verified the token (a revoked or replaced key
/// refuses it), and `iat`/`exp` are compared with the store's clock (an expired token is refused and
/// forgotten). Any other text, even one byte apart, goes through every check of `APITokenCheck`.
final class AcceptedTokenCache: Sendable {
    /// What an accepted token was verified with.
    struct Entry: Sendable {
        var keyID: String
        /// The key whose public key verified the signature.
        var key: ECPrivateKey
        var issuedAt: Int64
        var expires: Int64
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Tokens remembered at most; a server signs a new one every few minutes, tests a handful.
    let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The entry for exactly `token`, if it was accepted before.
    func entry(for token: Substring) -> Entry? {
        entries.withLock { $0[String(token)] }
    }

    /// Remembers an accepted token. When full, expired entries go first, then everything.
    func remember(_ token: Substring, _ entry: Entry, nowSeconds: Int64) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.expires > nowSeconds }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[String(token)] = entry
        }
    }

    /// Forgets `token` (it expired, or its key is gone).
    func forget(_ token: Substring) {
        _ = entries.withLock { $0.removeValue(forKey: String(token)) }
    }

    /// Tokens remembered now.
    var count: Int { entries.withLock { $0.count } }
}
