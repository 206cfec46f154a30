import DepotWire
import HTTP
import Server

/// JSON answers whose bodies come from `Encodable` wire types, encoded with ``WireJSON``.
enum JSONAnswer {
    /// A JSON response (`Cache-Control: no-store` unless `headers` sets one).
    static func response(status: Int = 200, _ value: some Encodable, _ label: RouteLabel, headers: HTTPFields = HTTPFields()) -> Response {
        var fields = headers
        fields.append("Content-Type", "application/json; charset=utf-8")
        if !fields.contains("cache-control") { fields.append("Cache-Control", "no-store") }
        return Response(status: status, headers: fields, body: .bytes(bytes(value)), route: label.rawValue)
    }

    /// `value` as JSON text. Wire types hold strings, integers and booleans only, which always encode; should
    /// one ever fail, the body says so instead of being empty.
    static func bytes(_ value: some Encodable) -> [UInt8] {
        do {
            return try WireJSON.encode(value)
        } catch {
            return Array("{\"error\": {\"code\": \"internal_error\", \"message\": \"The answer could not be encoded.\"}}\n".utf8)
        }
    }
}
