import AppStore
import Server
package import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One POST to a receiver that is not Apple (the studio's webhook URL), bounded by a timeout.
///
/// No redirect is followed: a `3xx` is the receiver's answer, which the caller counts as a failure (a POST
/// redirected, turned into a GET elsewhere and answered `2xx` would otherwise pass for a delivery). Of the
/// answer's body at most `maximumBodyBytes` is kept (its status is all that counts).
///
/// The request races a timer; the loser is not waited for. As everywhere in Depot, the URLSession task is
/// never cancelled (cancelling races inside swift-corelibs-foundation on Linux): a late answer is dropped and
/// URLSession's own, slightly longer timeout bounds it.
package struct OutboundPost: Sendable {
    /// What came back.
    package enum Outcome: Sendable, Equatable {
        /// An HTTP status.
        case status(Int)
        /// No answer (refused, dropped, timed out), with a reason for the logs.
        case noAnswer(String)
    }

    /// The most of an answer's body kept in memory.
    static let maximumBodyBytes = 64 << 10

    let session: BoundedHTTPSession
    let timeout: Double

    /// Posts that give up after `timeout` seconds.
    package init(timeout: Double) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout.rounded(.up) + 1
        configuration.timeoutIntervalForResource = timeout.rounded(.up) + 1
        configuration.httpMaximumConnectionsPerHost = 16
        session = BoundedHTTPSession(configuration: configuration, maximumBodyBytes: Self.maximumBodyBytes)
        self.timeout = timeout
    }

    /// POSTs `body` to `url` with `headers`.
    package func post(_ body: Data, to url: URL, headers: [(String, String)]) async -> Outcome {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.timeoutInterval = timeout.rounded(.up) + 1
        request.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let prepared = request
        let (session, timeout) = (session, timeout)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let once = Mutex<CheckedContinuation<Outcome, Never>?>(continuation)
            let finish: @Sendable (Outcome) -> Void = { outcome in once.withLock { $0.take() }?.resume(returning: outcome) }
            let timer = Task(executorPreference: WorkerPool.shared) {
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                if !Task.isCancelled { finish(.noAnswer("no answer within \(timeout) s")) }
            }
            Task(executorPreference: WorkerPool.shared) {
                switch await session.send(prepared) {
                case .answered(let status, _, _, _): finish(.status(status))
                case .failed(let reason, _): finish(.noAnswer(reason))
                }
                timer.cancel()
            }
        }
    }
}
