/// Why a download token was refused (spec §4.3).
package enum TokenRejection: Error, Sendable, Equatable {
    case missing
    case invalid
    case expired
    case wrongPack
    case revoked
    /// The revocation state this instance holds was last confirmed longer ago than `--ledger-stale-max` (the
    /// shared ledger is away): no pack file is served until it is current again (scale-out §3).
    case ledgerStale
}
