import DepotCore
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

    func health() -> Reply {
        .later { [self] in
            let ledgerOK = await ledgerWritable?() ?? true
            let snapshot = store.current
            let failure = store.lastFailure
            var catalog = "{\"products\": \(snapshot?.liveProductCount ?? 0), \"updated\": "
            catalog += snapshot.map { JSONText.string(Timestamp.rfc3339($0.v2.lastModified)) } ?? "null"
            if let failure { catalog += ", \"error\": \(JSONText.string(failure.description))" }
            catalog += "}"
            let healthy = snapshot != nil && failure == nil && ledgerOK
            var body = "{\"status\": \(healthy ? "\"ok\"" : "\"unavailable\""), \"catalog\": \(catalog), "
            body += "\"disk\": {\"contentFreeBytes\": \(max(0, space.freeBytes(at: paths.contentDirectory))), "
            body += "\"dataFreeBytes\": \(max(0, space.freeBytes(at: paths.dataDirectory)))}"
            if !ledgerOK { body += ", \"ledger\": \"not writable\"" }
            body += "}\n"
            return JSONResponse.make(status: healthy ? 200 : 503, body, route: "healthz")
        }
    }

    func metricsResponse() -> Response {
        var fields = HTTPFields()
        fields.append("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        fields.append("Cache-Control", "no-store")
        return Response(status: 200, headers: fields, body: .bytes(Array(metrics.render().utf8)), route: "metrics")
    }
}

