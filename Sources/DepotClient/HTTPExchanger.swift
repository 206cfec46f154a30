public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Sends one HTTP request and returns the response with its whole body; the client's only contact with
/// the network. The default is `URLSession`; a program may plug in its own (the `depot fetch` command
/// uses a lean HTTP/1.1 client on Linux, where swift-corelibs-foundation's URLSession costs several CPU
/// seconds per gigabyte). Redirects may be returned as they are: the client follows them itself.
public protocol HTTPExchanger: Sendable {
    func exchange(_ request: URLRequest) async throws -> (HTTPURLResponse, Data)
}

/// `URLSession.data(for:)`.
public struct URLSessionExchanger: HTTPExchanger {
    public let session: URLSession

    public init(session: URLSession) {
        self.session = session
    }

    public func exchange(_ request: URLRequest) async throws -> (HTTPURLResponse, Data) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw DepotClientError.invalidResponse("not an HTTP response") }
        return (http, data)
    }
}
