import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One HTTP exchange with Apple, bounded by a timeout: the outbound path `ReceiptVerifier` and
/// `ServerAPIClient` share.
///
/// The request and a timer race and the loser is not waited for. The URLSession task is never
/// cancelled: cancelling races inside swift-corelibs-foundation on Linux (a crash), so a late answer
/// is dropped and URLSession's own, longer timeout bounds it. Both run on `executor` when one is
/// given (the server's worker pool), else as plain tasks.
enum AppleHTTPCall {
    /// What came back.
    enum Answer: Sendable {
        /// An HTTP response (any status) with its body and `Retry-After` field.
        case answered(status: Int, body: Data, retryAfter: String?)
        /// No response: timeout, refused or dropped connection; `kind` tells a timeout and a connection closed
        /// unanswered apart.
        case noAnswer(reason: String, kind: BoundedHTTPSession.NoAnswer)
    }

    /// Largest answer body read (a history page of 20 signed transactions is about 100 KB).
    static let maximumBodyBytes = 8 << 20

    /// A session for calls bounded by `timeout` seconds, with as many connections as callers waiting; it
    /// follows no redirect (Apple's APIs send none: a `3xx` is an unexpected answer) and reads at most
    /// `maximumBodyBytes` of a body.
    static func makeSession(timeout: Double) -> BoundedHTTPSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = sessionTimeout(timeout)
        configuration.timeoutIntervalForResource = sessionTimeout(timeout)
        // Each call waits on Apple (~100 ms or more): as many calls in flight as clients waiting, within reason.
        configuration.httpMaximumConnectionsPerHost = 256
        return BoundedHTTPSession(configuration: configuration, maximumBodyBytes: maximumBodyBytes)
    }

    /// URLSession's own limit, kept above `timeout`: swift-corelibs-foundation truncates request timeouts
    /// to whole seconds (0.5 s becomes 0 and every call fails at once; 1.5 s becomes 1 s), so the exact
    /// limit is enforced by `perform`'s own timer and URLSession's only backs it up.
    static func sessionTimeout(_ timeout: Double) -> Double {
        timeout.rounded(.up) + 1
    }

    /// Sends `request` and waits at most `timeout` seconds for the whole answer.
    static func perform(_ request: URLRequest, session: BoundedHTTPSession, timeout: Double,
                        executor: (any TaskExecutor)?) async -> Answer {
        var request = request
        request.timeoutInterval = sessionTimeout(timeout)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let prepared = request
        return await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            let gate = FirstAnswer(continuation)
            let timer = spawn(on: executor) {
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                if !Task.isCancelled { gate.resume(.noAnswer(reason: "Apple did not answer within \(timeout) s", kind: .timedOut)) }
            }
            _ = spawn(on: executor) {
                let answer: Answer
                let sent = await session.send(prepared)
                switch sent {
                case .answered(_, _, _, truncated: true):
                    answer = .noAnswer(reason: "Apple's answer exceeds \(maximumBodyBytes) bytes", kind: .other)
                case .answered(let status, _, let body, truncated: false):
                    answer = .answered(status: status, body: body, retryAfter: sent.field("Retry-After"))
                case .failed(let reason, let kind):
                    answer = .noAnswer(reason: "no answer from Apple: \(reason)", kind: kind)
                }
                gate.resume(answer)
                timer.cancel()
            }
        }
    }

    /// Starts work on `executor` when one is given, else as a plain task.
    static func spawn(on executor: (any TaskExecutor)?, _ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if let executor { return Task(executorPreference: executor) { await work() } }
        return Task { await work() }
    }

    /// Resumes a continuation with the first answer only.
    private final class FirstAnswer: Sendable {
        private let continuation: Mutex<CheckedContinuation<Answer, Never>?>

        init(_ continuation: CheckedContinuation<Answer, Never>) {
            self.continuation = Mutex(continuation)
        }

        func resume(_ answer: Answer) {
            continuation.withLock { pending in
                pending?.resume(returning: answer)
                pending = nil
            }
        }
    }
}
