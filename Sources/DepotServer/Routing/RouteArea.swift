import DepotWire
package import HTTP

/// A part of the URL space with one label and, optionally, a check that runs before any of its routes is
/// looked up: `/admin/` checks the admin token first, so that without it nothing (not even which paths exist)
/// is revealed. Paths in an area that no route matches are `404` under the area's label, wrong methods `405`.
package struct RouteArea: Sendable {
    /// Refuses a request before routing (nil lets it through).
    package typealias Check = @Sendable (RequestHead) -> (any AnswerableError)?

    let template: PathTemplate
    let label: RouteLabel
    let check: Check?

    init(_ template: PathTemplate, _ label: RouteLabel, check: Check? = nil) {
        self.template = template
        self.label = label
        self.check = check
    }
}
