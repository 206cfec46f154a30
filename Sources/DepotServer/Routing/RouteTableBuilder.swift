package import DepotWire
package import HTTP

/// Collects routes and areas, then validates and freezes them into a ``RouteTable`` (Hummingbird's router is
/// the model: built, then frozen and checked at start-up).
package struct RouteTableBuilder: Sendable {
    /// A table that cannot be built: a malformed template, a route without methods, two routes for the same
    /// method and path shape, or two templates of the same shape spelled differently.
    package struct Problem: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    private var routes: [Route] = []
    private var areas: [RouteArea] = []

    package init() {}

    /// Adds one route: `methods` on `template`, counted under `label`, answered by `handler`.
    package mutating func add(_ methods: [HTTPMethod], _ template: PathTemplate, _ label: RouteLabel, _ handler: @escaping Route.Handler) {
        routes.append(Route(methods, template, label, handler))
    }

    mutating func add(_ route: Route) {
        routes.append(route)
    }

    /// Adds an area (see ``RouteArea``). Areas are tried in the order added.
    package mutating func area(_ template: PathTemplate, _ label: RouteLabel, check: RouteArea.Check? = nil) {
        areas.append(RouteArea(template, label, check: check))
    }

    mutating func area(_ area: RouteArea) {
        areas.append(area)
    }

    /// The frozen table, or the first problem found.
    package func build() throws(Problem) -> RouteTable {
        for template in routes.map(\.template) + areas.map(\.template) {
            if let problem = template.problem { throw Problem(description: "\(template): \(problem)") }
        }
        var groups: [(template: PathTemplate, routes: [Route])] = []
        for route in routes {
            guard !route.methods.isEmpty else { throw Problem(description: "\(route.template) has a route without methods") }
            if let index = groups.firstIndex(where: { $0.template.hasSameShape(as: route.template) }) {
                let group = groups[index]
                guard group.template == route.template else {
                    throw Problem(description: "\(route.template) and \(group.template) match the same paths")
                }
                if let clash = route.methods.first(where: { method in group.routes.contains { $0.methods.contains(method) } }) {
                    throw Problem(description: "two routes for \(clash) \(route.template)")
                }
                groups[index].routes.append(route)
            } else {
                groups.append((route.template, [route]))
            }
        }
        let ordered = groups.sorted { PathTemplate.moreSpecific($0.template, than: $1.template) }
        return RouteTable(templates: ordered.map { RouteTable.TemplateRoutes(template: $0.template, routes: $0.routes, allow: Self.allow($0.routes)) },
                          areas: areas, routes: routes)
    }

    /// `Allow`: the methods in declaration order, `HEAD` right after `GET` (RFC 9110 §10.2.1).
    package static func allow(_ routes: [Route]) -> String {
        var methods: [HTTPMethod] = []
        for method in routes.flatMap(\.methods) where !methods.contains(method) {
            methods.append(method)
            if method == .get && !routes.contains(where: { $0.methods.contains(.head) }) { methods.append(.head) }
        }
        return methods.map(\.description).joined(separator: ", ")
    }
}
