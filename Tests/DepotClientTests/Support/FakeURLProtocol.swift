import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Routes every request of a session to the ``FakeDepot`` registered for the request's host, in process.
final class FakeURLProtocol: URLProtocol {
    static let servers = Mutex<[String: FakeDepot]>([:])
    private let stopped = Mutex(false)

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let request = self.request
        let recorded = RecordedRequest(method: request.httpMethod ?? "GET", url: request.url!,
                                       headers: request.allHTTPHeaderFields ?? [:], body: Self.body(of: request))
        let server = request.url?.host.flatMap { host in Self.servers.withLock { $0[host] } }
        // The protocol object is only touched again to deliver, once; URLProtocol is not Sendable.
        let target = UncheckedTransfer(value: self)
        Task {
            let reply = await server?.respond(to: recorded) ?? .failure(.cannotFindHost)
            target.value.deliver(reply, for: recorded.url)
        }
    }

    override func stopLoading() { stopped.withLock { $0 = true } }

    private func deliver(_ reply: FakeReply, for url: URL) {
        guard !stopped.withLock({ $0 }) else { return }
        switch reply {
        case .stall:
            return
        case .failure(let code):
            client?.urlProtocol(self, didFailWithError: URLError(code))
        case .response(let status, let headers, let body, let responseURL):
            var fields = headers
            if status != 304 { fields["Content-Length"] = String(body.count) }
            let response = HTTPURLResponse(url: responseURL ?? url, statusCode: status, httpVersion: "HTTP/1.1",
                                           headerFields: fields)!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            if !body.isEmpty { client?.urlProtocol(self, didLoad: body) }
            client?.urlProtocolDidFinishLoading(self)
        }
    }

    private static func body(of request: URLRequest) -> Data? {
        if let body = request.httpBody { return body }
        guard let stream = request.httpBodyStream else { return nil }
        stream.open()
        defer { stream.close() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            data.append(buffer, count: count)
        }
        return data
    }
}

/// Moves a non-Sendable reference into a task that is its only user from then on.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
}
