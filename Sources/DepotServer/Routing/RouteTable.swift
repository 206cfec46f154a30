import DepotWire
package import HTTP
package import Server

/// The frozen route table: routes grouped by path template, most specific template first, and the areas.
///
/// Built once by ``RouteTableBuilder`` (which validates it) and never changed afterwards; a second listener
/// gets its own table from ``subset(_:)``. Resolving a request:
/// 1. the first area whose template matches the path runs its check (the admin token), which may answer;
/// 2. the most specific template that matches the path is the route's; none: `404`;
/// 3. a route of that template for the method (`HEAD` wherever `GET`) handles it; none: `405` with `Allow`
///    (the template's methods in declaration order);
/// 4. what the handler throws is answered by ``ErrorMap`` under the route's label. `404` and `405` inside an
///    area carry the area's label.
package struct RouteTable: Sendable {
    /// The routes of one template, and the `Allow` value they make.
    struct TemplateRoutes: Sendable {
        let template: PathTemplate
        let routes: [Route]
        let allow: String

        /// The route for `method`: an explicit one first, then `GET`'s for `HEAD`.
        func route(for method: HTTPMethod) -> Route? {
            routes.first { $0.methods.contains(method) } ?? routes.first { $0.answers(method) }
        }
    }

    let templates: [TemplateRoutes]
    let areas: [RouteArea]
    /// Every route, in declaration order.
    let routes: [Route]

    /// A table answering only the routes whose labels are in `labels` (an operations listener serving
    /// `/healthz` and `/metrics`, say), with the same areas. Everything else is `404` there.
    package func subset(_ labels: Set<RouteLabel>) throws(RouteTableBuilder.Problem) -> RouteTable {
        var builder = RouteTableBuilder()
        for area in areas { builder.area(area) }
        for route in routes where labels.contains(route.label) { builder.add(route) }
        return try builder.build()
    }

    /// Answers a request whose path decoded to `segments` (without the root: `/a/b` is `["a", "b"]`).
    package func handle(_ head: RequestHead, target: RequestTarget, segments: [String], loop: Int, identity: RequestIdentity? = nil) -> Handling {
        let area = areas.first { $0.template.match(segments) != nil }
        if let area, let check = area.check, let refusal = check(head) {
            return Self.reply(refusal, area.label)
        }
        for entry in templates {
            guard let parameters = entry.template.match(segments) else { continue }
            guard let route = entry.route(for: head.method) else {
                return Self.reply(RoutingFailure.methodNotAllowed(allow: entry.allow), area?.label ?? entry.routes[0].label)
            }
            let request = RouteRequest(head: head, target: target, parameters: parameters, loop: loop, requestID: identity?.requestID,
                                       clientAddress: identity?.clientAddress ?? "", secureTransport: identity?.secureTransport ?? false)
            return Self.handling(route.label) { try route.handler(request) }
        }
        return Self.reply(RoutingFailure.notFound, area?.label ?? .other)
    }

    /// What `work` decides, or the answer to what it throws under `label`: a handler's errors, also for the part of
    /// a handler that decides later (`Handling.decideLater`).
    static func handling(_ label: RouteLabel, _ work: () throws -> Handling) -> Handling {
        do {
            return try work()
        } catch let error as any AnswerableError {
            return reply(error, label)
        } catch {
            return reply(RoutingFailure.unexpected("\(error)"), label)
        }
    }

    /// The answer to `OPTIONS *` (RFC 9110 §9.3.7: the server in general, not a resource): `200` with every method
    /// some route answers in `Allow`, no body. `OPTIONS` on a resource stays `405`.
    package func serverOptions() -> Response {
        var fields = HTTPFields()
        fields.append("Allow", RouteTableBuilder.allow(routes))
        fields.append("Cache-Control", "no-store")
        return Response(status: 200, headers: fields, body: .empty, route: RouteLabel.other.rawValue)
    }

    /// The labels of every route (what a subset can be made of).
    package var labels: Set<RouteLabel> { Set(routes.map(\.label)) }

    private static func reply(_ error: any AnswerableError, _ label: RouteLabel) -> Handling {
        .reply(.response(error.answer.response(label)))
    }
}
