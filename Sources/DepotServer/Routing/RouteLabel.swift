/// A route's name in the metrics (`depot_http_requests_total{route=...}`) and the access counters: a small,
/// fixed set, one per route of the table plus the answers no route gives.
enum RouteLabel: String, Sendable, CaseIterable {
    case products
    case healthz
    case metrics
    /// Anything under `/v1/packs/` that no pack route matches, and wrong methods there.
    case packs
    case packManifest = "pack_manifest"
    case packFile = "pack_file"
    case receipts
    case notifications
    /// Anything under `/admin/` that no admin route takes: the token check, unknown paths, wrong methods.
    case admin
    case adminUpload = "admin_upload"
    case adminPublish = "admin_publish"
    case adminRollback = "admin_rollback"
    case adminPromote = "admin_promote"
    /// No route: unknown paths and undecodable ones.
    case other
    /// Protocol errors the engine answers before any route (parse failures, bodies over their limit).
    case error
}
