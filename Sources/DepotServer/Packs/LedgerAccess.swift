import Foundation
import Ledger

/// The ledger's in-memory access index behind the pack routes' revocation check, and whether that index is
/// current enough to serve on: a PostgreSQL ledger's state is current while its change feed confirmed it at
/// most `staleMax` seconds ago (scale-out §3); a SQLite ledger's always is.
struct LedgerAccess: AccessChecker {
    let ledger: Ledger
    /// `--ledger-stale-max`.
    let staleMax: Double

    func isAllowed(originalTransactionID: String, account: String?) -> Bool {
        ledger.access(originalTransactionID: originalTransactionID, account: account) == .allowed
    }

    var isCurrent: Bool {
        guard ledger.backend == .postgres else { return true }
        return Date().timeIntervalSince(ledger.health.lastConfirmed) <= staleMax
    }
}
