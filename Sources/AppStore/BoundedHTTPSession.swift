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
        /// No answer: refused, dropped, timed out, with the reason and what kind of failure it was.
        case failed(reason: String, kind: NoAnswer)

        /// The value of field `name` (any case) of an answer.
        package func field(_ name: String) -> String? {
            guard case .answered(_, let fields, _, _) = self else { return nil }
            return fields.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// What kind of failure gave no answer.
    package enum NoAnswer: Sendable, Equatable {
        case timedOut
        /// The connection was closed or reset before a byte of an answer came (libcurl's "empty reply", or a
        /// lost connection without a response head). `resent`: the host had answered on this session within
        /// libcurl's connection reuse window before the request went out, so it most likely went on a kept-alive
        /// connection, and then libcurl (under URLSession on Linux) has already sent it a second time on a fresh
        /// connection by itself: this is how that second attempt ended.
        case closedUnanswered(resent: Bool)
        /// Anything else: refused, no such host, an answer broken off after its head, …
        case other
    }

    /// How long libcurl keeps an idle connection for reuse (`CURLOPT_MAXAGE_CONN`'s default, 118 s): a request
    /// to a host that answered on this session more recently than this may go on that kept-alive connection.
    static let reuseWindow: Duration = .seconds(118)

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
            delegate.register(task.taskIdentifier, url: request.url, continuation)
            task.resume()
        }
    }

    /// The session's delegate: refuses redirects, gathers each task's body up to the limit, resumes its waiter.
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        struct Pending {
            var continuation: CheckedContinuation<Answer, Never>
            var body = Data()
            var truncated = false
            /// Whether the request's host had answered within ``BoundedHTTPSession/reuseWindow`` when it went out.
            var mayReuse = false
            var host = ""
        }

        let limit: Int
        // Every property that changes is behind one of these two locks (the class is otherwise immutable).
        private let pending = Mutex<[Int: Pending]>([:])
        /// When each host (scheme, host, port) last answered on this session; a few hosts (Apple's two, a webhook).
        private let answeredAt = Mutex<[String: ContinuousClock.Instant]>([:])

        init(limit: Int) {
            self.limit = limit
        }

        func register(_ task: Int, url: URL?, _ continuation: CheckedContinuation<Answer, Never>) {
            let host = Self.hostKey(url)
            let now = ContinuousClock.now
            let mayReuse = answeredAt.withLock { $0[host].map { now - $0 < BoundedHTTPSession.reuseWindow } ?? false }
            pending.withLock { $0[task] = Pending(continuation: continuation, mayReuse: mayReuse, host: host) }
        }

        private static func hostKey(_ url: URL?) -> String {
            "\(url?.scheme ?? "")://\(url?.host ?? ""):\(url?.port ?? -1)"
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
                    answer = Self.failure(error, afterHead: true, mayReuse: entry.mayReuse)
                } else {
                    answeredAt.withLock { hosts in
                        if hosts.count >= 64, hosts[entry.host] == nil { hosts.removeAll() }
                        hosts[entry.host] = ContinuousClock.now
                    }
                    answer = .answered(status: http.statusCode, fields: fields, body: entry.body, truncated: entry.truncated)
                }
            } else {
                answer = error.map { Self.failure($0, afterHead: false, mayReuse: entry.mayReuse) }
                    ?? .failed(reason: "no HTTP answer", kind: .other)
            }
            entry.continuation.resume(returning: answer)
        }

        private static func failure(_ error: any Error, afterHead: Bool, mayReuse: Bool) -> Answer {
            let code = (error as? URLError)?.code
            let kind: NoAnswer = switch code {
            case .timedOut?: .timedOut
            // libcurl's CURLE_GOT_NOTHING, and CURLE_RECV_ERROR/SEND_ERROR with ECONNRESET (swift-corelibs-foundation's mapping).
            case .badServerResponse? where !afterHead, .networkConnectionLost? where !afterHead: .closedUnanswered(resent: mayReuse)
            default: .other
            }
            return .failed(reason: "\(error.localizedDescription)\(code.map { " (URL error \($0.rawValue))" } ?? "")", kind: kind)
        }
    }
}
