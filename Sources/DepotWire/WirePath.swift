/// Every public URL path of Depot, defined once: the server routes on these templates, builds its redirect
/// `Location`, manifest `url` and entitlement `manifest` fields with them, and the client and the tests build
/// and parse the same paths.
public enum WirePath {
    /// `GET /products_v1.json`: the live product IDs (spec §4.1).
    public static let productsV1 = PathTemplate("/products_v1.json")
    /// `GET /products_v2.json`: the live products with their packs.
    public static let productsV2 = PathTemplate("/products_v2.json")
    /// `POST /v1/receipts`: validate purchases, get download tokens (spec §4.2).
    public static let receipts = PathTemplate("/v1/receipts")
    /// `POST /v1/notifications/appstore`: App Store Server Notifications (spec §4.5).
    public static let notifications = PathTemplate("/v1/notifications/appstore")
    /// `GET /v1/packs/{pack}/manifest`: `307` to the live version's manifest (spec §4.4).
    public static let packManifest = PathTemplate("/v1/packs/{pack}/manifest")
    /// `GET /v1/packs/{pack}/{version}/manifest`: a version's manifest, with a plan on `?available=`.
    public static let versionManifest = PathTemplate("/v1/packs/{pack}/{version}/manifest")
    /// `GET /v1/packs/{pack}/{version}/files/{path}`: one file of a version. `{path*}` so that a file URL
    /// without a path still has this shape (the server answers it `400`, a malformed path).
    public static let packFile = PathTemplate("/v1/packs/{pack}/{version}/files/{path*}")
    /// Anything under `/v1/packs/`: what no pack route above matches (`400` for a malformed pack ID, else `404`).
    public static let packsArea = PathTemplate("/v1/packs/{rest+}")
    /// `PUT /admin/v1/packs/{pack}/{version}/files/{path}`: stream one file into staging (spec §4.7).
    public static let adminPackFile = PathTemplate("/admin/v1/packs/{pack}/{version}/files/{path+}")
    /// `POST /admin/v1/packs/{pack}/{version}/publish`: publish the uploaded files.
    public static let adminPublish = PathTemplate("/admin/v1/packs/{pack}/{version}/publish")
    /// `POST /admin/v1/packs/{pack}/rollback`: a new live version with an older version's files (`pack-updates.md` §3).
    public static let adminRollback = PathTemplate("/admin/v1/packs/{pack}/rollback")
    /// `POST /admin/v1/packs/{pack}/{version}/promote`: make a staged version live (`pack-updates.md` §4).
    public static let adminPromote = PathTemplate("/admin/v1/packs/{pack}/{version}/promote")
    /// `DELETE /admin/v1/packs/{pack}/{version}/upload`: discard what was uploaded for a version never published.
    public static let adminUpload = PathTemplate("/admin/v1/packs/{pack}/{version}/upload")
    /// `GET /admin/v1/packs`: every pack and its versions (operations.md §1).
    public static let adminPacks = PathTemplate("/admin/v1/packs")
    /// `GET /admin/v1/products`: every product of the catalog, live and retired.
    public static let adminProducts = PathTemplate("/admin/v1/products")
    /// `PATCH /admin/v1/products/{id}`: change a product's title and description.
    public static let adminProduct = PathTemplate("/admin/v1/products/{id}")
    /// `POST /admin/v1/products/{id}/retire`: off sale (owners keep access).
    public static let adminRetire = PathTemplate("/admin/v1/products/{id}/retire")
    /// `POST /admin/v1/products/{id}/unretire`: on sale again.
    public static let adminUnretire = PathTemplate("/admin/v1/products/{id}/unretire")
    /// `POST /admin/v1/prune`: delete old versions that are not live.
    public static let adminPrune = PathTemplate("/admin/v1/prune")
    /// `GET /admin/v1/check`: what `depot check` reports.
    public static let adminCheck = PathTemplate("/admin/v1/check")
    /// `GET /admin/v1/traffic`: per-minute traffic for the console's charts.
    public static let adminTraffic = PathTemplate("/admin/v1/traffic")
    /// `GET /admin/v1/purchases?transaction=ID` or `?account=A`: what the ledger knows of purchases (spec
    /// app-store-server-api §8).
    public static let adminPurchases = PathTemplate("/admin/v1/purchases")
    /// `POST /admin/v1/purchases/{originalTransactionId}/revoke`: a support revocation.
    public static let adminPurchaseRevoke = PathTemplate("/admin/v1/purchases/{original}/revoke")
    /// `POST /admin/v1/purchases/{originalTransactionId}/restore`: a support restore.
    public static let adminPurchaseRestore = PathTemplate("/admin/v1/purchases/{original}/restore")
    /// `GET /admin`: `308` to the console's page.
    public static let consoleRoot = PathTemplate("/admin")
    /// `GET /admin/`: the publisher console's page.
    public static let consolePage = PathTemplate("/admin/")
    /// `GET /admin/console/{file}`: the page's modules and style sheet.
    public static let consoleAsset = PathTemplate("/admin/console/{file}")
    /// `POST` (sign in), `GET` (the CSRF token again), `DELETE` (sign out) `/admin/session`.
    public static let consoleSession = PathTemplate("/admin/session")
    /// Everything under `/admin/`: the admin token is checked before anything else is revealed.
    public static let adminArea = PathTemplate("/admin/{rest*}")
    /// `GET /healthz` (spec §4.6).
    public static let health = PathTemplate("/healthz")
    /// `GET /metrics`: Prometheus text.
    public static let metrics = PathTemplate("/metrics")
    /// `GET /v1/edge/authorize`: whether the token of the request in `X-Original-URI` (and its `Authorization`)
    /// may open that pack file now; `204`, or the answer the file URL would give instead (scale-out §6).
    public static let edgeAuthorize = PathTemplate("/v1/edge/authorize")
    /// `GET /v1/edge/origin/{pack}/{version}/files/{path}`: a pack file for the edge's cache, opened by the edge
    /// secret instead of a token.
    public static let edgeOrigin = PathTemplate(edgeOriginPrefix + "{pack}/{version}/files/{path*}")
    /// What a pack file URL's `/v1/packs/` becomes on the origin route (the edge's configuration maps it).
    public static let edgeOriginPrefix = "/v1/edge/origin/"

    /// Every template above.
    public static let all: [PathTemplate] = [
        productsV1, productsV2, receipts, notifications, packManifest, versionManifest, packFile, packsArea,
        adminPackFile, adminPublish, adminRollback, adminPromote, adminUpload, adminPacks, adminProducts, adminProduct, adminRetire,
        adminUnretire, adminPrune, adminCheck, adminTraffic, adminPurchases, adminPurchaseRevoke,
        adminPurchaseRestore, consoleRoot, consolePage, consoleAsset, consoleSession, adminArea, health, metrics,
        edgeAuthorize, edgeOrigin,
    ]

    /// `/v1/packs/{pack}/manifest`.
    public static func packManifest(pack: String) -> String {
        packManifest.path(["pack": pack])
    }

    /// `/v1/packs/{pack}/{version}/manifest`.
    public static func versionManifest(pack: String, version: Int) -> String {
        versionManifest.path(["pack": pack, "version": String(version)])
    }

    /// `/v1/packs/{pack}/{version}/files/{path}`, each segment of `path` percent-encoded.
    public static func packFile(pack: String, version: Int, path: String) -> String {
        packFile.path(["pack": pack, "version": String(version), "path": path])
    }

    /// `/admin/v1/packs/{pack}/{version}/files/{path}`.
    public static func adminPackFile(pack: String, version: Int, path: String) -> String {
        adminPackFile.path(["pack": pack, "version": String(version), "path": path])
    }

    /// `/admin/v1/packs/{pack}/rollback`.
    public static func adminRollback(pack: String) -> String {
        adminRollback.path(["pack": pack])
    }

    /// `/admin/v1/packs/{pack}/{version}/promote`.
    public static func adminPromote(pack: String, version: Int) -> String {
        adminPromote.path(["pack": pack, "version": String(version)])
    }

    /// `/admin/v1/packs/{pack}/{version}/upload`.
    public static func adminUpload(pack: String, version: Int) -> String {
        adminUpload.path(["pack": pack, "version": String(version)])
    }

    /// `/admin/v1/purchases/{original}/revoke`.
    public static func adminPurchaseRevoke(original: String) -> String {
        adminPurchaseRevoke.path(["original": original])
    }

    /// `/admin/v1/purchases/{original}/restore`.
    public static func adminPurchaseRestore(original: String) -> String {
        adminPurchaseRestore.path(["original": original])
    }

    /// `/admin/v1/products/{id}/retire`.
    public static func adminRetire(product: String) -> String {
        adminRetire.path(["id": product])
    }

    /// `/admin/v1/products/{id}/unretire`.
    public static func adminUnretire(product: String) -> String {
        adminUnretire.path(["id": product])
    }

    /// `/admin/v1/packs/{pack}/{version}/publish`.
    public static func adminPublish(pack: String, version: Int) -> String {
        adminPublish.path(["pack": pack, "version": String(version)])
    }
}
