import DepotWire
import HTTP

/// What a route handler gets: the request head, its target, the parameters its template matched, and the
/// event loop it runs on.
package struct RouteRequest: Sendable {
    let head: RequestHead
    let target: RequestTarget
    let parameters: PathParameters
    /// The event loop the request runs on (per-loop caches are indexed by it).
    let loop: Int
    /// The request's ID (operations.md §2): lines logged while handling it carry it.
    var requestID: String? = nil
    /// The client's address (`HOST:PORT`).
    var clientAddress: String = ""
    /// Whether the client reached Depot over TLS (through a trusted proxy that says so).
    var secureTransport = false

    /// A matched parameter; "" when the template has none of that name (a table built from these templates
    /// always has them).
    package func parameter(_ name: String) -> String { parameters[name] ?? "" }
}
