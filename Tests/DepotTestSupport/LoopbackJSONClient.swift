import Foundation

/// JSON over HTTP/1.1 to a loopback server (chromedriver), one connection per request on a thread of its own, so
/// that neither Swift's cooperative pool nor URLSession is involved (corelibs' URLSession refuses chromedriver's
/// header fields, written without a space after the colon).
public struct LoopbackJSONClient: Sendable {
    public let port: Int

    public init(port: Int) {
        self.port = port
    }

    /// `method path` with a JSON body; the decoded JSON answer (or nil when there is none).
    public func send(_ method: String, _ path: String, _ body: [String: Any]? = nil, timeout: Double = 120) async throws -> Any? {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if body != nil { head += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + [UInt8](payload)
        let port = port
        let response: RawResponse = try await withCheckedThrowingContinuation { continuation in
            Thread {
                do {
                    let connection = try RawHTTPConnection(port: port)
                    _ = connection.send(bytes)
                    continuation.resume(returning: try connection.readResponse(timeout: timeout))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
        guard !response.body.isEmpty else { return nil }
        return try JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])
    }
}
