/// A route's name in the metrics (`depot_http_requests_total{route=...}`) and the access counters: a small,
/// fixed set, one per route of the table plus the answers no route gives.
package enum RouteLabel: String, Sendable, CaseIterable {
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
    case adminUploadDelete = "admin_upload_delete"
    case adminPacks = "admin_packs"
    case adminProducts = "admin_products"
    case adminRetire = "admin_retire"
    case adminUnretire = "admin_unretire"
    case adminPrune = "admin_prune"
    case adminCheck = "admin_check"
    /// The edge's question before it serves pack bytes from its cache (`/v1/edge/authorize`). The edge's cache
    /// fills (`/v1/edge/origin/...`) send pack file bytes and count as `pack_file`.
    case edgeAuthorize = "edge_authorize"
    /// `GET`/`HEAD` on an upload path: how much of a resumable upload arrived.
    case adminUploadStatus = "admin_upload_status"
    /// `PATCH /admin/v1/products/{id}`: a product's title and description.
    case adminProductEdit = "admin_product_edit"
    /// `GET /admin/v1/traffic`: the per-minute traffic for the console's charts.
    case adminTraffic = "admin_traffic"
    /// `GET /admin/v1/purchases`: the support view of purchases.
    case adminPurchases = "admin_purchases"
    /// `POST /admin/v1/purchases/{id}/revoke|restore`: a support decision.
    case adminPurchaseDecision = "admin_purchase_decision"
    /// The console's page and modules (`/admin/`, `/admin/console/...`).
    case console
    /// Sign-in, the session's CSRF token, sign-out (`/admin/session`).
    case consoleSession = "console_session"
    /// No route: unknown paths and undecodable ones.
    case other
    /// Protocol errors the engine answers before any route (parse failures, bodies over their limit).
    case error

    /// What the ops listener serves (operations.md §3): health, metrics and the admin API.
    static let operations: Set<RouteLabel> = [
        .healthz, .metrics, .admin, .adminUpload, .adminPublish, .adminUploadDelete, .adminPacks, .adminProducts, .adminRetire,
        .adminUnretire, .adminPrune, .adminCheck, .adminRollback, .adminPromote, .adminUploadStatus, .adminTraffic, .adminProductEdit, .adminPurchases,
        .adminPurchaseDecision, .console, .consoleSession,
    ]
}
