import DepotWire
import Glibc
import HTTP
import Server

/// The application on the event loops: the product lists' fast path, then the route table.
final class DepotResponder: Responder {
    let table: RouteTable
    let lists: ProductListRoutes
    /// `/products_v1.json` and `/products_v2.json` as bytes, for the fast path.
    private let v1Path = Array(WirePath.productsV1.pattern.utf8)
    private let v2Path = Array(WirePath.productsV2.pattern.utf8)

    init(table: RouteTable, lists: ProductListRoutes) {
        self.table = table
        self.lists = lists
    }

    /// The product lists straight from the head's bytes: their precomputed answers, before any String is made.
    /// Anything the precomputed answers do not cover (other methods, ranges, unusual conditions, no catalog)
    /// goes on to `handle` (and its fast path, then the table).
    func respond(toRaw head: RawRequestHead, context: RequestContext) -> Response? {
        if head.pathIs(v1Path) { return lists.lists(loop: context.loopIndex)?.v1.respond(toRaw: head) }
        if head.pathIs(v2Path) { return lists.lists(loop: context.loopIndex)?.v2.respond(toRaw: head) }
        return nil
    }

    func handle(_ head: RequestHead, context: RequestContext) -> Handling {
        // Fast path: a GET or HEAD of a product list, the hottest requests, is matched on the raw target's bytes
        // before any decoding or table lookup. The table has the same routes (a percent-encoded spelling, a
        // wrong method still reach them) and would give the same answer, only later.
        if head.method == .get || head.method == .head {
            if Self.pathIs(head.target, v1Path) { return .reply(.response(lists.answer(head, .v1, loop: context.loopIndex))) }
            if Self.pathIs(head.target, v2Path) { return .reply(.response(lists.answer(head, .v2, loop: context.loopIndex))) }
        }
        let target = RequestTarget(head.target)
        guard let segments = try? target.pathSegments() else {
            // Spec §7: a malformed request is a 400, then the connection is closed.
            var response = RoutingFailure.malformedPath.answer.response(.other)
            response.closeConnection = true
            return .reply(.response(response))
        }
        return table.handle(head, target: target, segments: segments, loop: context.loopIndex)
    }

    /// Whether the target's path (before any `?`) is exactly `path`, compared as bytes.
    private static func pathIs(_ target: String, _ path: [UInt8]) -> Bool {
        var target = target
        return target.withUTF8 { bytes in
            let n = path.count
            guard bytes.count >= n, bytes.count == n || bytes[n] == UInt8(ascii: "?") else { return false }
            return path.withUnsafeBufferPointer { memcmp(bytes.baseAddress!, $0.baseAddress!, n) == 0 }
        }
    }

    /// The engine's refusals in the API's error shape (the error map words them), counted as `error`.
    func errorResponse(for error: ProtocolError) -> Response {
        error.answer.response(.error)
    }
}
