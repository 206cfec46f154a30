import DepotWire
import Glibc
import HTTP
import Server

/// The application on the event loops: the product lists' fast path, then the route table.
final class DepotResponder: Responder {
    let table: RouteTable
    /// The product lists' fast path; nil on a listener that does not serve them (the ops listener).
    let lists: ProductListRoutes?
    /// Request IDs and client addresses (trusted proxies).
    let identifier: RequestIdentifier
    /// `/products_v1.json` and `/products_v2.json` as bytes, for the fast path.
    private let v1Path = Array(WirePath.productsV1.pattern.utf8)
    private let v2Path = Array(WirePath.productsV2.pattern.utf8)

    init(table: RouteTable, lists: ProductListRoutes?, identifier: RequestIdentifier) {
        self.table = table
        self.lists = lists
        self.identifier = identifier
    }

    /// The product lists straight from the head's bytes: their precomputed answers, before any String is made.
    /// Anything the precomputed answers do not cover (other methods, ranges, unusual conditions, no catalog)
    /// goes on to `handle` (and its fast path, then the table).
    /// A request from a trusted proxy goes on too: its `X-Request-ID` and client are read from the decoded fields.
    func respond(toRaw head: RawRequestHead, context: RequestContext) -> Response? {
        guard let lists else { return nil }
        let list = head.pathIs(v1Path) ? lists.lists(loop: context.loopIndex)?.v1
            : head.pathIs(v2Path) ? lists.lists(loop: context.loopIndex)?.v2 : nil
        guard let list, !identifier.trusts(peer: context.remoteAddress), var response = list.respond(toRaw: head) else { return nil }
        response.requestID = identifier.generate(loop: context.loopIndex)
        return response
    }

    func handle(_ head: RequestHead, context: RequestContext) -> Handling {
        // Every answer carries the request's ID (`X-Request-ID`) and the client it was for (the access line).
        let identity = identifier.identify(head, peer: context.remoteAddress, loop: context.loopIndex)
        return identity.stamp(route(head, context: context, identity: identity))
    }

    private func route(_ head: RequestHead, context: RequestContext, identity: RequestIdentity) -> Handling {
        // Fast path: a GET or HEAD of a product list, the hottest requests, is matched on the raw target's bytes
        // before any decoding or table lookup. The table has the same routes (a percent-encoded spelling, a
        // wrong method still reach them) and would give the same answer, only later.
        if let lists, head.method == .get || head.method == .head {
            if Self.pathIs(head.target, v1Path) { return .reply(.response(lists.answer(head, .v1, loop: context.loopIndex))) }
            if Self.pathIs(head.target, v2Path) { return .reply(.response(lists.answer(head, .v2, loop: context.loopIndex))) }
        }
        // RFC 9112 §3.2.4: the asterisk-form, valid for OPTIONS only (the parser refuses it otherwise).
        if head.method == .options, head.target == "*" { return .reply(.response(table.serverOptions())) }
        let target = RequestTarget(head.target)
        guard let segments = try? target.pathSegments() else {
            // Spec §7: a malformed request is a 400, then the connection is closed.
            var response = RoutingFailure.malformedPath.answer.response(.other)
            response.closeConnection = true
            return .reply(.response(response))
        }
        return table.handle(head, target: target, segments: segments, loop: context.loopIndex, identity: identity)
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

    /// The engine's refusals in the API's error shape (the error map words them), counted as `error`, under an
    /// ID of their own.
    func errorResponse(for error: ProtocolError) -> Response {
        var response = error.answer.response(.error)
        response.requestID = identifier.generate(loop: 0)
        return response
    }
}
