import DepotWire
import HTTP
import Server

/// `/healthz` and `/metrics` (spec §4.6, operations.md §3).
struct OperationRoutes: Sendable {
    let health: HealthCheck
    let metrics: Metrics

    /// `GET /healthz`: `200` while this instance serves (`ok`, or `degraded` with the reasons), `503` when it
    /// cannot (`unavailable`). `detailed: false` (the public port beside an ops listener) sends the status only.
    func health(detailed: Bool) -> Reply {
        .later { [health] in
            let report = await health.report()
            let status = report.isServing ? 200 : 503
            return detailed ? JSONAnswer.response(status: status, report, .healthz)
                            : JSONAnswer.response(status: status, report.summary, .healthz)
        }
    }

    func metricsResponse() -> Response {
        var fields = HTTPFields()
        fields.append("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        fields.append("Cache-Control", "no-store")
        return Response(status: 200, headers: fields, body: .bytes(Array(metrics.render().utf8)), route: RouteLabel.metrics.rawValue)
    }
}
