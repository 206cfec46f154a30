public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// A URLSession for calls out of the server (Apple, the studio's webhook receiver) that never follows a
/// redirect and never holds more than `maximumBodyBytes` of an answer's body.
///
/// A `3xx` is the answer itself (the caller counts it as a failure), not a new request to the `Location`: a
/// POST turned into a GET elsewhere, answered `2xx`, would otherwise pass for a delivery. The body arrives
/// through the session's delegate piece by piece; bytes past the limit are not kept (the answer is marked
/// `truncated`), so a receiver sending an endless body costs no memory, and URLSession's own timeout ends
/// the transfer. As everywhere in Depot, no task is ever cancelled (cancelling races inside
/// swift-corelibs-foundation on Linux): callers race their own timer and drop a late answer.
package final class BoundedHTTPSession: Sendable {
    /// What one request got.
    package enum Answer: Sendable {
        /// An HTTP answer (any status, a `3xx` included), its fields, and the body's first `maximumBodyBytes`.
        case answered(status: Int, fields: [String: String], body: Data, truncated: Bool)
        /// No answer: refused, dropped, timed out (`timedOut`), with the reason.
        case failed(reason: String, timedOut: Bool)

        /// The value of field `name` (any case) of an answer.
        package func field(_ name: String) -> String? {
            guard case .answered(_, let fields, _, _) = self else { return nil }
            return fields.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    private let session: URLSession
    private let delegate: Delegate

    /// A session with `configuration`, keeping at most `maximumBodyBytes` of each body.
    package init(configuration: URLSessionConfiguration, maximumBodyBytes: Int) {
        delegate = Delegate(limit: maximumBodyBytes)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// Sends `request` and waits for its answer (bounded by the session's timeouts).
    package func send(_ request: URLRequest) async -> Answer {
        await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            let task = session.dataTask(with: request)
            delegate.register(task.taskIdentifier, continuation)
            task.resume()
        }
    }

    /// The session's delegate: refuses redirects, gathers each task's body up to the limit, resumes its waiter.
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        struct Pending {
            var continuation: CheckedContinuation<Answer, Never>
            var body = Data()
            var truncated = false
        }

        let limit: Int
        // Every property that changes is behind this lock (the class is otherwise immutable).
        private let pending = Mutex<[Int: Pending]>([:])

        init(limit: Int) {
            self.limit = limit
        }

        func register(_ task: Int, _ continuation: CheckedContinuation<Answer, Never>) {
            pending.withLock { $0[task] = Pending(continuation: continuation) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(nil)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            pending.withLock { all in
                guard var entry = all[dataTask.taskIdentifier] else { return }
                let room = limit - entry.body.count
                if data.count > room { entry.truncated = true }
                if room > 0 { entry.body.append(data.prefix(room)) }
                all[dataTask.taskIdentifier] = entry
            }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            let answer: Answer
            if let http = task.response as? HTTPURLResponse {
                var fields: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { fields[name] = value }
                }
                // A transfer that broke off after the head is still no complete answer.
                if let error, !entry.truncated {
                    answer = Self.failure(error)
                } else {
                    answer = .answered(status: http.statusCode, fields: fields, body: entry.body, truncated: entry.truncated)
                }
            } else {
                answer = error.map(Self.failure) ?? .failed(reason: "no HTTP answer", timedOut: false)
            }
            entry.continuation.resume(returning: answer)
        }

        private static func failure(_ error: any Error) -> Answer {
            let code = (error as? URLError).map { " (URL error \($0.code.rawValue))" } ?? ""
            return .failed(reason: "\(error.localizedDescription)\(code)", timedOut: (error as? URLError)?.code == .timedOut)
        }
    }
}
