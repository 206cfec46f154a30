import HTTP
import Server
import Synchronization

/// Routes `POST /verifyReceipt` and `POST /sandbox/verifyReceipt` to the store's `verifyReceipt`,
/// `/inApps/...` and `/sandbox/inApps/...` to its Server API, and `/simulator/v1/...` to purchases on demand.
final class SimulatedAppStoreResponder: Responder {
    let store = Mutex<SimulatedAppStore?>(nil)

    func handle(_ head: RequestHead, context: RequestContext) -> Handling {
        guard let store = store.withLock({ $0 }) else { return .reply(.response(Response(status: 503))) }
        let target = RequestTarget(head.target)
        for (prefix, environment) in [("/sandbox/inApps/", SimulatedAppStore.Environment.sandbox), ("/inApps/", .production)]
        where target.path.hasPrefix(prefix) {
            let path = String(target.path.dropFirst(environment == .sandbox ? "/sandbox".count : 0))
            let method = head.method
            let authorization = head.fields.first("authorization")
            return .collectBody(limit: 1 << 20) { body in
                .later {
                    await store.serverAPI.answer(method: method, path: path, query: target, environment: environment,
                                                 authorization: authorization, body: body)
                }
            }
        }
        if target.path.hasPrefix(SimulatedAppStore.mintingPrefix) {
            let name = String(target.path.dropFirst(SimulatedAppStore.mintingPrefix.count))
            guard head.method == .post else { return .reply(.response(Response(status: 405, headers: ["Allow": "POST"]))) }
            return .collectBody(limit: 64 << 10) { body in .response(store.mint(path: name, body: body)) }
        }
        let sandbox: Bool
        if head.pathIs("/verifyReceipt") { sandbox = false } else if head.pathIs("/sandbox/verifyReceipt") { sandbox = true } else {
            return .reply(.response(Response(status: 404)))
        }
        guard head.method == .post else { return .reply(.response(Response(status: 405, headers: ["Allow": "POST"]))) }
        return .collectBody(limit: 4 << 20) { body in
            .later { await store.answer(body: body, sandboxEndpoint: sandbox) }
        }
    }

    func errorResponse(for error: ProtocolError) -> Response {
        Response(status: error.status, body: .bytes(Array(error.message.utf8)))
    }
}
