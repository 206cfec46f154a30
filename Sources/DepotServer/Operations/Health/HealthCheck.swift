import DepotWire

/// Asks every contributor in turn and gives the combined report: `unavailable` if any part cannot serve,
/// else `degraded` if any part is unwell, else `ok`.
struct HealthCheck: Sendable {
    let contributors: [any HealthContributor]

    func report() async -> HealthReport {
        var report = HealthReport()
        for contributor in contributors { await contributor.contribute(to: &report) }
        return report
    }
}
