import DepotCore
import DepotWire
import HTTP
import Platform
import Server

/// `/healthz` and `/metrics` (spec §4.6).
struct OperationRoutes: Sendable {
    let store: CatalogStore
    let metrics: Metrics
    let paths: DepotPaths
    /// Free-space figures of the content and data volumes.
    let space: any VolumeSpace
    /// A cheap write probe of the ledger; nil when there is none.
    let ledgerWritable: (@Sendable () async -> Bool)?

    /// `GET /healthz`: `200` when a catalog is loaded, its last reload worked and the ledger can be written;
    /// `503` with the same shape and the reason otherwise.
    func health() -> Reply {
        .later { [self] in
            let ledgerOK = await ledgerWritable?() ?? true
            let snapshot = store.current
            let failure = store.lastFailure
            let healthy = snapshot != nil && failure == nil && ledgerOK
            let report = HealthReport(
                status: healthy ? "ok" : "unavailable",
                catalog: HealthReport.CatalogState(products: snapshot?.liveProductCount ?? 0,
                                                   updated: snapshot.map { Timestamp.rfc3339($0.v2.lastModified) },
                                                   error: failure?.description),
                disk: HealthReport.DiskState(contentFreeBytes: max(0, space.freeBytes(at: paths.contentDirectory)),
                                             dataFreeBytes: max(0, space.freeBytes(at: paths.dataDirectory))),
                ledger: ledgerOK ? nil : "not writable")
            return JSONAnswer.response(status: healthy ? 200 : 503, report, .healthz)
        }
    }

    func metricsResponse() -> Response {
        var fields = HTTPFields()
        fields.append("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        fields.append("Cache-Control", "no-store")
        return Response(status: 200, headers: fields, body: .bytes(Array(metrics.render().utf8)), route: RouteLabel.metrics.rawValue)
    }
}

