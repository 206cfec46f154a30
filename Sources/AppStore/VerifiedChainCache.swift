package import DepotCrypto
package import Foundation

/// Remembers JWS headers whose `x5c` passed the header, certificate, chain and OID checks, so the
/// next payload signed with the same certificates skips header decoding, DER parsing and two
/// P-384 signature checks.
///
/// The key is the exact header segment text (compared byte for byte): everything but the chain's
/// time validity follows from it. An entry is only used at a time inside the chain's validity
/// window (`VerifiedChain.isValid(at:)`, the rule libcrypto applied); otherwise the chain is
/// validated again from scratch. Failures are never cached. Trust settings are fixed per verifier,
/// and each verifier owns its cache.
package final class VerifiedChainCache: @unchecked Sendable {  // all state is guarded by `lock`
    /// A chain that passed, with the leaf it ends in.
    package struct Entry {
        let leaf: X509Certificate
        let chain: VerifiedChain

        /// An entry for a leaf and the chain verified for it.
        package init(leaf: X509Certificate, chain: VerifiedChain) {
            self.leaf = leaf
            self.chain = chain
        }
    }

    private let lock = NSLock()
    private var entries: [Data: Entry] = [:]
    private let capacity: Int

    /// Apple rotates its leaf every two years or so: a handful of entries is plenty.
    package init(capacity: Int = 32) {
        self.capacity = capacity
    }

    /// The entry for a header segment, whatever the time.
    package func entry(forHeader header: Data) -> Entry? {
        lock.withLock { entries[header] }
    }

    /// How many headers are remembered.
    package var count: Int {
        lock.withLock { entries.count }
    }

    /// Remembers an entry for a header segment, forgetting all others first when the cache is full.
    package func store(_ entry: Entry, forHeader header: Data) {
        lock.withLock {
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[header] = entry
        }
    }
}
