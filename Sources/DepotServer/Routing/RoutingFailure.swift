/// Why the route table answers instead of a route.
package enum RoutingFailure: Error, Sendable, Equatable {
    /// No route has this path.
    case notFound
    /// A route has this path but not this method; `allow` lists the methods it has (`Allow`).
    case methodNotAllowed(allow: String)
    /// The path cannot be decoded (spec §7: `400`, then the connection closes).
    case malformedPath
    /// A handler failed with an error that has no answer of its own (a bug): `500`.
    case unexpected(String)
}
