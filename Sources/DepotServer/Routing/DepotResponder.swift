import DepotCore
import HTTP
import Server
import Synchronization

/// The application's routes (spec §4), dispatched on the event loops.
final class DepotResponder: Responder {
    let store: CatalogStore
    let packs: PackRoutes
    let operations: OperationRoutes
    let purchases: (any PurchaseRoutes)?
    let admin: (any AdminRoutes)?
    /// Per-loop cache of the current snapshot's lists, refreshed when the store's generation moves.
    private let slots: [LoopSlot]

    /// Touched only by the event loop whose index it has.
    final class LoopSlot: @unchecked Sendable {
        var generation = -1
        var lists: DepotSnapshot.Lists?
    }

    init(store: CatalogStore, packs: PackRoutes, operations: OperationRoutes, purchases: (any PurchaseRoutes)?,
         admin: (any AdminRoutes)?) {
        self.store = store
        self.packs = packs
        self.operations = operations
        self.purchases = purchases
        self.admin = admin
        slots = (0..<max(1, store.replicaCount)).map { _ in LoopSlot() }
    }

    private static let getOrHead = "GET, HEAD"

    func handle(_ head: RequestHead, context: RequestContext) -> Handling {
        // The product lists: the hottest routes, matched before any decoding.
        if head.pathIs("/products_v1.json") { return .reply(.response(list(head, version: 1, loop: context.loopIndex))) }
        if head.pathIs("/products_v2.json") { return .reply(.response(list(head, version: 2, loop: context.loopIndex))) }

        let target = RequestTarget(head.target)
        let segments: [String]
        do {
            segments = try target.pathSegments()
        } catch {
            // Spec §7: a malformed request is a 400, then the connection is closed.
            var response = APIError(400, "bad_request", "Malformed request path.").response(route: "other")
            response.closeConnection = true
            return .reply(.response(response))
        }
        switch segments.first {
        case "products_v1.json" where segments.count == 1: return .reply(.response(list(head, version: 1, loop: context.loopIndex)))
        case "products_v2.json" where segments.count == 1: return .reply(.response(list(head, version: 2, loop: context.loopIndex)))
        case "healthz" where segments.count == 1:
            guard isGetOrHead(head) else { return reply(.methodNotAllowed(Self.getOrHead), route: "healthz") }
            return .reply(operations.health())
        case "metrics" where segments.count == 1:
            guard isGetOrHead(head) else { return reply(.methodNotAllowed(Self.getOrHead), route: "metrics") }
            return .reply(.response(operations.metricsResponse()))
        case "v1":
            return handleV1(head, segments: segments, target: target, context: context)
        case "admin":
            guard let admin else { return reply(.notFound(), route: "admin") }
            return admin.handle(head, segments: segments, target: target)
        default:
            return reply(.notFound(), route: "other")
        }
    }

    private func handleV1(_ head: RequestHead, segments: [String], target: RequestTarget, context: RequestContext) -> Handling {
        guard segments.count >= 2 else { return reply(.notFound(), route: "other") }
        switch segments[1] {
        case "packs" where segments.count >= 3:
            guard isGetOrHead(head) else { return reply(.methodNotAllowed(Self.getOrHead), route: "packs") }
            return .reply(.response(packs.respond(to: head, segments: segments[2...], target: target, loop: context.loopIndex)))
        case "receipts" where segments.count == 2:
            guard head.method == .post else { return reply(.methodNotAllowed("POST"), route: "receipts") }
            guard let purchases else { return reply(APIError(503, "unavailable", "Purchases are not configured."), route: "receipts") }
            return purchases.receipts(head)
        case "notifications" where segments.count == 3 && segments[2] == "appstore":
            guard head.method == .post else { return reply(.methodNotAllowed("POST"), route: "notifications") }
            guard let purchases else { return reply(APIError(503, "unavailable", "Purchases are not configured."), route: "notifications") }
            return purchases.notifications(head)
        default:
            return reply(.notFound(), route: "other")
        }
    }

    private func list(_ head: RequestHead, version: Int, loop: Int) -> Response {
        guard isGetOrHead(head) else {
            return APIError.methodNotAllowed(Self.getOrHead).response(route: "products")
        }
        let slot = slots[loop % slots.count]
        let generation = store.generation.load(ordering: .acquiring)
        if slot.generation != generation {
            let snapshot = store.current
            slot.lists = snapshot.map { $0.replicas[loop % $0.replicas.count] }
            slot.generation = generation
        }
        guard let lists = slot.lists else {
            return APIError(503, "catalog_unavailable", "The catalog has not loaded; see the server log.").response(route: "products")
        }
        return (version == 1 ? lists.v1 : lists.v2).respond(to: head)
    }

    private func isGetOrHead(_ head: RequestHead) -> Bool { head.method == .get || head.method == .head }

    private func reply(_ error: APIError, route: String) -> Handling {
        .reply(.response(error.response(route: route)))
    }

    func errorResponse(status: Int, code: String, message: String) -> Response {
        APIError(status, code, message).response(route: "error")
    }
}

/// `POST /v1/receipts` and `POST /v1/notifications/appstore`.
protocol PurchaseRoutes: Sendable {
    func receipts(_ head: RequestHead) -> Handling
    func notifications(_ head: RequestHead) -> Handling
}

/// `/admin/v1/...`, present only when an admin token is configured.
protocol AdminRoutes: Sendable {
    func handle(_ head: RequestHead, segments: [String], target: RequestTarget) -> Handling
}
