import DepotTestSupport
import Foundation

/// Raw HTTP/1.1 requests for the console tests, each on a thread of its own (socket reads never block Swift's
/// cooperative pool).
struct ConsoleHTTP: Sendable {
    let port: Int

    /// `method path` with `headers` (a `Host` is added) and `body`.
    func send(_ method: String, _ path: String, _ headers: [(String, String)] = [], body: [UInt8] = []) async throws -> RawResponse {
        var raw = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { raw += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { raw += "Content-Length: \(body.count)\r\n" }
        raw += "\r\n"
        let bytes = Array(raw.utf8) + body
        let port = port
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            _ = connection.send(bytes)
            return try connection.readResponse(timeout: 30, isHead: method == "HEAD")
        }
    }

    /// Sends a head announcing `declaredLength` body bytes, then only `sent` of them, and closes the connection.
    func sendCut(_ path: String, _ headers: [(String, String)], declaredLength: Int, sent: [UInt8]) async throws {
        var raw = "PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: \(declaredLength)\r\n"
        for (name, value) in headers { raw += "\(name): \(value)\r\n" }
        raw += "\r\n"
        let bytes = Array(raw.utf8) + sent
        let port = port
        try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            _ = connection.send(bytes)
            // Give the server the bytes before the connection goes (a close right after the write can reset it).
            Thread.sleep(forTimeInterval: 0.3)
        }
    }

    /// The JSON object of a response body.
    static func json(_ response: RawResponse) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]) ?? [:]
    }

    /// The `error.code` of an error answer.
    static func errorCode(_ response: RawResponse) -> String? {
        (json(response)["error"] as? [String: Any])?["code"] as? String
    }
}
