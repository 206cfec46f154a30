import DepotWire

/// The embedded SQLite ledger's part: a ledger this instance cannot write makes it `unavailable` (purchases
/// could not be recorded).
struct LedgerHealth: HealthContributor {
    /// A cheap write probe.
    let writable: @Sendable () async -> Bool

    func contribute(to report: inout HealthReport) async {
        let ok = await writable()
        report.ledger = HealthReport.LedgerState(status: ok ? HealthReport.ok : HealthReport.unavailable, backend: "sqlite")
        if !ok { report.fail(because: "the ledger cannot be written") }
    }
}
