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
        #if canImport(FoundationNetworking)
        // swift-corelibs-foundation's async `data(for:)` cancels its URLSession task when the calling task is
        // cancelled, and that race has resumed its own continuation twice (a fatal "CONTINUATION MISUSE"
        // abort). Here the task is never cancelled (README, Decisions: URLSession tasks are never cancelled):
        // a cancelled download stops after the requests in flight, whose completion resumes this once.
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>) in
            let once = ResumeOnce(continuation)
            session.dataTask(with: request) { data, response, error in
                once.resume(with: Result {
                    if let error { throw error }
                    guard let http = response as? HTTPURLResponse else {
                        throw DepotClientError.invalidResponse("not an HTTP response")
                    }
                    return (http, data ?? Data())
                })
            }.resume()
        }
        #else
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw DepotClientError.invalidResponse("not an HTTP response") }
        return (http, data)
        #endif
    }
}

#if canImport(FoundationNetworking)
/// A continuation resumed by the first answer only.
private final class ResumeOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>?

    init(_ continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>) {
        self.continuation = continuation
    }

    func resume(with result: Result<(HTTPURLResponse, Data), any Error>) {
        let waiting = lock.withLock { () -> CheckedContinuation<(HTTPURLResponse, Data), any Error>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}
#endif
