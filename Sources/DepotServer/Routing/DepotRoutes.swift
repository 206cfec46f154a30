import DepotWire
import HTTP
import Ledger
import Server

/// Every route of Depot, each declared once: methods, path template (``WirePath``), label, handler. The
/// product lists are also answered before the table by ``DepotResponder``'s fast path, with the same result.
///
/// Adding a route is one `add` line in its group here (and its template in `WirePath` when it is a public
/// URL); a listener that serves part of the API builds `table.subset([...])`: with `--ops-listen`, the ops
/// listener serves `table().subset(RouteLabel.operations)` and the public port ``publicTable()``.
package struct DepotRoutes {
    let lists: ProductListRoutes
    let packs: PackRoutes
    let operations: OperationRoutes
    let purchases: PurchaseService
    /// nil when no admin token is configured: `/admin/` is then `404` throughout.
    let admin: AdminService?
    let edge: EdgeRoutes
    /// The publisher console and the traffic report; present exactly when `admin` is.
    var console: ConsoleRoutes? = nil
    var traffic: TrafficRoutes? = nil
    /// The support view of purchases; present exactly when `admin` is.
    var support: PurchaseSupport? = nil

    /// The validated table of every route (one port serves everything, or the ops listener takes its subset).
    func table() throws(RouteTableBuilder.Problem) -> RouteTable {
        var table = RouteTableBuilder()
        Self.declare(lists, in: &table)
        Self.declare(packs, in: &table)
        Self.declare(purchases, in: &table)
        Self.declare(operations, in: &table)
        Self.declare(admin: admin, console: console, traffic: traffic, support: support, in: &table)
        Self.declare(edge, in: &table)
        return try table.build()
    }

    /// The public port's table beside an ops listener (operations.md §3): `/healthz` answers the status only;
    /// `/metrics` and everything under `/admin/` are `404`. The edge routes stay here: nginx load-balances the
    /// public ports and asks them (scale-out §6).
    func publicTable() throws(RouteTableBuilder.Problem) -> RouteTable {
        var table = RouteTableBuilder()
        Self.declare(lists, in: &table)
        Self.declare(packs, in: &table)
        Self.declare(purchases, in: &table)
        table.add([.get], WirePath.health, .healthz) { [operations] _ in .reply(operations.health(detailed: false)) }
        Self.declare(admin: nil, console: nil, traffic: nil, support: nil, in: &table)
        Self.declare(edge, in: &table)
        return try table.build()
    }

    /// `GET /products_v1.json`, `GET /products_v2.json` (spec §4.1).
    static func declare(_ lists: ProductListRoutes, in table: inout RouteTableBuilder) {
        table.add([.get], WirePath.productsV1, .products) { .reply(.response(lists.answer($0.head, .v1, loop: $0.loop))) }
        table.add([.get], WirePath.productsV2, .products) { .reply(.response(lists.answer($0.head, .v2, loop: $0.loop))) }
    }

    /// The pack URLs (spec §4.4), and everything else under `/v1/packs/`.
    package static func declare(_ packs: PackRoutes, in table: inout RouteTableBuilder) {
        table.area(WirePath.packsArea, .packs)
        table.add([.get], WirePath.packManifest, .packManifest) { .reply(.response(try packs.manifestRedirect($0))) }
        table.add([.get], WirePath.versionManifest, .packManifest) { try packs.manifest($0) }
        table.add([.get], WirePath.packFile, .packFile) { .reply(try packs.file($0)) }
        table.add([.get], WirePath.packsArea, .packs) { .reply(.response(try packs.unmatched($0))) }
    }

    /// `POST /v1/receipts` (spec §4.2), `POST /v1/notifications/appstore` (spec §4.5).
    static func declare(_ purchases: PurchaseService, in table: inout RouteTableBuilder) {
        table.add([.post], WirePath.receipts, .receipts) { try purchases.receipts($0.head, requestID: $0.requestID) }
        table.add([.post], WirePath.notifications, .notifications) { try purchases.notifications($0.head, requestID: $0.requestID) }
    }

    /// `GET /healthz`, `GET /metrics` (spec §4.6).
    static func declare(_ operations: OperationRoutes, in table: inout RouteTableBuilder) {
        table.add([.get], WirePath.health, .healthz) { _ in .reply(operations.health(detailed: true)) }
        table.add([.get], WirePath.metrics, .metrics) { _ in .reply(.response(operations.metricsResponse())) }
    }

    /// The nginx edge's authorize and origin routes (scale-out §6).
    static func declare(_ edge: EdgeRoutes, in table: inout RouteTableBuilder) {
        table.add([.get], WirePath.edgeAuthorize, .edgeAuthorize) { .reply(.response(try edge.authorize($0))) }
        table.add([.get], WirePath.edgeOrigin, .packFile) { .reply(try edge.origin($0)) }
    }

    /// The admin API (spec §4.7) behind its token or the console's session, and the console itself; or an
    /// `/admin/` that is `404` throughout.
    static func declare(admin: AdminService?, console: ConsoleRoutes?, traffic: TrafficRoutes?, support: PurchaseSupport?,
                        in table: inout RouteTableBuilder) {
        guard let admin, let console, let traffic, let support else {
            table.area(WirePath.adminArea, .admin)
            return
        }
        let access = console.access
        table.area(WirePath.adminArea, .admin) { access.check($0) }
        table.add([.put], WirePath.adminPackFile, .adminUpload) { try admin.upload($0) }
        table.add([.get], WirePath.adminPackFile, .adminUploadStatus) { try admin.uploadStatus($0) }
        table.add([.get], WirePath.adminTraffic, .adminTraffic) { _ in traffic.report() }
        table.add([.get], WirePath.consoleRoot, .console) { _ in .reply(.response(console.redirectToPage())) }
        table.add([.get], WirePath.consolePage, .console) { .reply(.response(console.page($0))) }
        table.add([.get], WirePath.consoleAsset, .console) { .reply(.response(try console.asset($0))) }
        table.add([.post], WirePath.consoleSession, .consoleSession) { try console.signIn($0) }
        table.add([.get], WirePath.consoleSession, .consoleSession) { .reply(.response(try console.current($0))) }
        table.add([.delete], WirePath.consoleSession, .consoleSession) { .reply(.response(try console.signOut($0))) }
        table.add([.post], WirePath.adminPublish, .adminPublish) { try admin.publish($0) }
        table.add([.post], WirePath.adminRollback, .adminRollback) { try admin.rollback($0) }
        table.add([.post], WirePath.adminPromote, .adminPromote) { try admin.promote($0) }
        table.add([.delete], WirePath.adminUpload, .adminUploadDelete) { try admin.deleteUpload($0) }
        table.add([.get], WirePath.adminPacks, .adminPacks) { admin.packs($0) }
        table.add([.get], WirePath.adminProducts, .adminProducts) { try admin.products($0) }
        table.add([.patch], WirePath.adminProduct, .adminProductEdit) { admin.editProduct($0) }
        table.add([.post], WirePath.adminRetire, .adminRetire) { admin.setStatus($0, retired: true) }
        table.add([.post], WirePath.adminUnretire, .adminUnretire) { admin.setStatus($0, retired: false) }
        table.add([.post], WirePath.adminPrune, .adminPrune) { admin.prune($0) }
        table.add([.get], WirePath.adminCheck, .adminCheck) { admin.check($0) }
        table.add([.get], WirePath.adminPurchases, .adminPurchases) { try support.lookup($0) }
        table.add([.post], WirePath.adminPurchaseRevoke, .adminPurchaseDecision) { support.decide($0, .revoke) }
        table.add([.post], WirePath.adminPurchaseRestore, .adminPurchaseDecision) { support.decide($0, .restore) }
    }
}
