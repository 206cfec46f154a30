import DepotWire
import HTTP
package import Server

/// An error answer: status, the spec's body (`{"error": {"code": ..., "message": ...}}` plus typed extra
/// fields) and extra header fields. ``ErrorMap`` makes one for every domain error.
package struct APIError: Error, Sendable {
    var status: Int
    var body: ErrorBody
    var headers: HTTPFields

    init(_ status: Int, _ code: String, _ message: String, headers: HTTPFields = HTTPFields()) {
        self.init(status: status, body: ErrorBody(code: code, message: message), headers: headers)
    }

    init(status: Int, body: ErrorBody, headers: HTTPFields = HTTPFields()) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// The response, counted under `route`.
    func response(route: String) -> Response {
        var fields = headers
        fields.append("Content-Type", "application/json; charset=utf-8")
        fields.append("Cache-Control", "no-store")
        return Response(status: status, headers: fields, body: .bytes(JSONAnswer.bytes(body)), route: route)
    }

    /// The response, counted under `label`.
    package func response(_ label: RouteLabel) -> Response { response(route: label.rawValue) }
}

extension APIError {
    /// The same answer with one more header field.
    func adding(_ name: String, _ value: String) -> APIError {
        var copy = self
        copy.headers.append(name, value)
        return copy
    }
}
