import DepotWire
import HTTP

/// What a route handler gets: the request head, its target, the parameters its template matched, and the
/// event loop it runs on.
struct RouteRequest: Sendable {
    let head: RequestHead
    let target: RequestTarget
    let parameters: PathParameters
    /// The event loop the request runs on (per-loop caches are indexed by it).
    let loop: Int

    /// A matched parameter; "" when the template has none of that name (a table built from these templates
    /// always has them).
    func parameter(_ name: String) -> String { parameters[name] ?? "" }
}
