/// Why an edge route (`/v1/edge/...`, scale-out §6) refuses a request before any pack check.
enum EdgeFailure: Error, Sendable, Equatable {
    /// The authorize route was asked without exactly one `X-Original-URI` holding an origin-form target.
    case missingOriginalURI
    /// `X-Original-URI` names something other than a pack file URL.
    case notAPackFile
    /// The origin route was asked without the edge secret, or with another one.
    case secretRequired
    /// The file URL answers the request with this status (a failed precondition, an unsatisfiable range):
    /// the edge is to ask it.
    case answeredByTheFileURL(status: Int)
}
