import DepotCore
package import DepotWire

/// The catalog's part: no catalog ever loaded is `unavailable`; a failed reload while the last good catalog is
/// served is `degraded` (one bad hand edit must not take every replica out of rotation).
package struct CatalogHealth: HealthContributor {
    let store: CatalogStore

    /// The part of `store`'s catalog.
    package init(store: CatalogStore) {
        self.store = store
    }

    package func contribute(to report: inout HealthReport) async {
        let snapshot = store.current
        let failure = store.lastFailure
        report.catalog = HealthReport.CatalogState(products: snapshot?.liveProductCount ?? 0,
                                                   updated: snapshot.map { Timestamp.rfc3339($0.v2.lastModified) },
                                                   error: failure?.description)
        guard let snapshot else {
            report.fail(because: "no catalog has loaded" + (failure.map { ": \($0.description)" } ?? ""))
            return
        }
        if let failure {
            report.degrade(because: "the last catalog reload failed (\(failure.problems.count) problem(s)); still serving the catalog of "
                + Timestamp.rfc3339(snapshot.v2.lastModified))
        }
    }
}
