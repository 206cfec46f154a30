import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer: status, fields, body and the URL that produced it.
struct HTTPAnswer: Sendable {
    var status: Int
    var url: URL?
    var body: Data
    private var fields: [String: String]

    init(_ response: HTTPURLResponse, body: Data) {
        status = response.statusCode
        url = response.url
        self.body = body
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        self.fields = fields
    }

    /// A header field by case-insensitive name.
    func field(_ name: String) -> String? { fields[name.lowercased()] }
}

/// Sends requests to the Depot server: resolves paths against the base URL, keeps URLSession's own cache
/// out of the way (the client does its own conditional requests), follows redirects itself when the
/// session does not, and turns failures into ``DepotClientError/transport(_:)`` or `CancellationError`.
struct DepotTransport: Sendable {
    let baseURL: URL
    let exchanger: any HTTPExchanger
    let clock: DepotClock

    /// Redirect statuses followed by hand (RFC 9110 §15.4): the session follows them itself on Apple
    /// platforms and for real HTTP on Linux, but not for every `URLProtocol`.
    private static let redirects: Set<Int> = [301, 302, 303, 307, 308]
    private static let maxRedirects = 5

    /// A URL for a server path such as `/v1/packs/level2/manifest` (or an absolute URL).
    func url(_ path: String) throws -> URL {
        guard let url = URL(string: path, relativeTo: baseURL)?.absoluteURL else {
            throw DepotClientError.invalidResponse("not a URL: \(path)")
        }
        return url
    }

    /// A request with the token as `Authorization: Bearer` (spec §4.3) and no local caching.
    func request(_ path: String, method: String = "GET", token: String? = nil) throws -> URLRequest {
        var request = URLRequest(url: try url(path))
        request.httpMethod = method
        request.cachePolicy = .reloadIgnoringLocalCacheData
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return request
    }

    /// Sends `request` and returns the final answer, whatever its status.
    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        var current = request
        for _ in 0...Self.maxRedirects {
            var answer = try await exchange(current)
            if Self.redirects.contains(answer.status), let location = answer.field("Location"),
               let target = URL(string: location, relativeTo: current.url)?.absoluteURL {
                current.url = target
                if answer.status == 303 { current.httpMethod = "GET"; current.httpBody = nil }
                continue
            }
            // A session that followed the redirect itself may have dropped `Authorization` on the way
            // (some platforms strip it): ask the final URL again with the original fields.
            if answer.status == 401, current.value(forHTTPHeaderField: "Authorization") != nil,
               let final = answer.url, final != current.url,
               ServerErrorBody(answer.body).code == "token_missing" {
                var again = current
                again.url = final
                answer = try await exchange(again)
            }
            return answer
        }
        throw DepotClientError.invalidResponse("too many redirects from \(request.url?.absoluteString ?? "?")")
    }

    /// Sends and maps errors: a cancelled task stays a `CancellationError`, any other failure is `.transport`.
    func exchange(_ request: URLRequest) async throws -> HTTPAnswer {
        do {
            let (http, data) = try await exchanger.exchange(request)
            return HTTPAnswer(http, body: data)
        } catch let error as DepotClientError {
            throw error
        } catch {
            if Task.isCancelled || error is CancellationError { throw CancellationError() }
            if let urlError = error as? URLError, urlError.code == .cancelled { throw CancellationError() }
            throw DepotClientError.transport(error)
        }
    }

    /// The error for a non-success answer.
    func error(for answer: HTTPAnswer) -> DepotClientError {
        DepotClientError(status: answer.status, body: answer.body, retryAfter: answer.field("Retry-After"), now: clock.now())
    }
}
