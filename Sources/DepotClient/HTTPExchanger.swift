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
        // swift-corelibs-foundation's async `data(for:)` has been seen to resume its own continuation twice (a
        // fatal "CONTINUATION MISUSE" abort) when a download is cancelled mid-request; the completion-handler
        // form, with a continuation of ours resumed once, does not depend on it.
        let running = RunningTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    running.finish(continuation, Result {
                        if let error { throw error }
                        guard let http = response as? HTTPURLResponse else {
                            throw DepotClientError.invalidResponse("not an HTTP response")
                        }
                        return (http, data ?? Data())
                    })
                }
                running.start(task)
            }
        } onCancel: {
            running.cancel()
        }
        #else
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw DepotClientError.invalidResponse("not an HTTP response") }
        return (http, data)
        #endif
    }
}

#if canImport(FoundationNetworking)
/// One data task of `URLSessionExchanger`: started unless the caller was already cancelled, cancelled with
/// it, and its continuation resumed exactly once.
private final class RunningTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false
    private var finished = false

    func start(_ task: URLSessionDataTask) {
        let cancelNow = lock.withLock { () -> Bool in
            self.task = task
            return cancelled
        }
        task.resume()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock { () -> URLSessionDataTask? in
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    func finish(_ continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>,
                _ result: Result<(HTTPURLResponse, Data), any Error>) {
        let first = lock.withLock { () -> Bool in
            defer { finished = true }
            return !finished
        }
        if first { continuation.resume(with: result) }
    }
}
#endif
