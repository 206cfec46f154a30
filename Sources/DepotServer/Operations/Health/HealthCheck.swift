package import DepotWire

/// Asks every contributor in turn and gives the combined report: `unavailable` if any part cannot serve,
/// else `degraded` if any part is unwell, else `ok`.
package struct HealthCheck: Sendable {
    let contributors: [any HealthContributor]

    /// A check asking `contributors`, in this order.
    package init(contributors: [any HealthContributor]) {
        self.contributors = contributors
    }

    /// The combined report.
    package func report() async -> HealthReport {
        var report = HealthReport()
        for contributor in contributors { await contributor.contribute(to: &report) }
        return report
    }
}
