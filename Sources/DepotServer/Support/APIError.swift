import DepotCore
import HTTP
import Server

/// Error responses in the one shape of spec §4: `{"error": {"code": ..., "message": ...}}` plus named extra fields.
struct APIError: Error, Sendable {
    var status: Int
    var code: String
    var message: String
    /// Extra top-level fields, already JSON-encoded values (e.g. `"appleStatus": "21003"`).
    var extra: [(String, String)] = []
    var headers: HTTPFields = HTTPFields()

    init(_ status: Int, _ code: String, _ message: String, extra: [(String, String)] = [], headers: HTTPFields = HTTPFields()) {
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        self.headers = headers
    }

    func response(route: String) -> Response {
        var body = "{\"error\": {\"code\": \(JSONText.string(code)), \"message\": \(JSONText.string(message))}"
        for (name, value) in extra { body += ", \(JSONText.string(name)): \(value)" }
        body += "}\n"
        var fields = headers
        fields.append("Content-Type", "application/json; charset=utf-8")
        fields.append("Cache-Control", "no-store")
        return Response(status: status, headers: fields, body: .bytes(Array(body.utf8)), route: route)
    }

    static func notFound(_ what: String = "No such resource.") -> APIError { APIError(404, "not_found", what) }

    static func methodNotAllowed(_ allowed: String) -> APIError {
        var headers = HTTPFields()
        headers.append("Allow", allowed)
        return APIError(405, "method_not_allowed", "Allowed methods: \(allowed).", headers: headers)
    }
}

/// A JSON response with the spec's content type.
enum JSONResponse {
    static func make(status: Int = 200, _ body: String, route: String, headers: HTTPFields = HTTPFields()) -> Response {
        var fields = headers
        fields.append("Content-Type", "application/json; charset=utf-8")
        if !fields.contains("cache-control") { fields.append("Cache-Control", "no-store") }
        return Response(status: status, headers: fields, body: .bytes(Array(body.utf8)), route: route)
    }
}
