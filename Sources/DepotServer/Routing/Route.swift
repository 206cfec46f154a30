package import DepotWire
package import HTTP
package import Server

/// One route of the table: the methods it answers, its path template, its label, and its handler.
///
/// A handler runs on an event loop and must not block; it answers with a `Handling` or throws an
/// ``AnswerableError``, which the table turns into the error answer (``ErrorMap``) under the route's label.
/// Checks that read the disk before a body is wanted go in `Handling.decideLater` (their errors answered by
/// ``RouteTable/handling(_:_:)`` the same way).
package struct Route: Sendable {
    /// Answers a matched request (on its event loop).
    package typealias Handler = @Sendable (RouteRequest) throws -> Handling

    let methods: [HTTPMethod]
    let template: PathTemplate
    let label: RouteLabel
    let handler: Handler

    /// `methods` on `template`, counted under `label`, answered by `handler`.
    package init(_ methods: [HTTPMethod], _ template: PathTemplate, _ label: RouteLabel, _ handler: @escaping Handler) {
        self.methods = methods
        self.template = template
        self.label = label
        self.handler = handler
    }

    /// Whether the route answers `method`: `HEAD` wherever `GET` (RFC 9110 §9.3.2).
    func answers(_ method: HTTPMethod) -> Bool {
        methods.contains(method) || (method == .head && methods.contains(.get))
    }
}
