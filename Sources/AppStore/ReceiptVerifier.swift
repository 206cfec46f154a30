public import DepotCore
import DepotCrypto
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// Where and how to call Apple's `verifyReceipt` (spec §3, §4.2).
public struct ReceiptVerifierConfiguration: Sendable {
    public var productionURL: URL
    public var sandboxURL: URL
    /// Sent as `password` when set.
    public var sharedSecret: String?
    public var allowSandbox: Bool
    /// Seconds before one call counts as failed.
    public var timeout: Double
    /// Pause before the one retry (under a second).
    public var retryBackoff: Double = 0.3
    /// How long a validated receipt is answered from the cache.
    public var cacheLifetime: Double = 60
    public var cacheCapacity: Int = 10_000

    public init(productionURL: URL, sandboxURL: URL, sharedSecret: String?, allowSandbox: Bool, timeout: Double) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret
        self.allowSandbox = allowSandbox
        self.timeout = timeout
    }
}

/// The final answer about one receipt.
public enum ReceiptVerification: Sendable, Equatable {
    /// Apple validated it (status 0 or 21006); `environment` is where it was validated.
    case valid(VerifyReceiptResponse, environment: AppStoreEnvironment)
    /// `422 receipt_invalid`.
    case invalid(appleStatus: Int?, reason: String)
    /// `503 apple_unavailable`: try again later.
    case unavailable(appleStatus: Int?, reason: String)
    /// `502 apple_misconfigured`.
    case misconfigured(appleStatus: Int?, reason: String)
}

/// Calls `verifyReceipt`: production first, sandbox on 21007 when allowed, production again on 21008;
/// one retry after a short backoff for retryable outcomes (21002, 21005, 21009, 21100–21199, HTTP 5xx,
/// timeouts); identical receipts answered from a short cache, and identical requests in flight share one
/// call to Apple. Never blocks a thread: URLSession's async API does the waiting.
public final class ReceiptVerifier: Sendable {
    public typealias CallObserver = @Sendable (_ outcome: String, _ seconds: Double) -> Void

    public let configuration: ReceiptVerifierConfiguration
    private let session: URLSession
    private let observer: CallObserver?
    /// Where the calls to Apple run (the server passes its worker pool); nil: plain tasks.
    private let executor: (any TaskExecutor)?
    private let cache = Mutex<[String: (expires: Date, result: ReceiptVerification)]>([:])
    /// Callers waiting for a call to Apple that another caller is making for the same receipt.
    private let inFlight = Mutex<[String: [CheckedContinuation<ReceiptVerification, Never>]]>([:])

    public init(configuration: ReceiptVerifierConfiguration, session: URLSession? = nil, observer: CallObserver? = nil,
                executor: (any TaskExecutor)? = nil) {
        self.configuration = configuration
        self.executor = executor
        if let session {
            self.session = session
        } else {
            let sessionConfiguration = URLSessionConfiguration.ephemeral
            sessionConfiguration.timeoutIntervalForRequest = Self.sessionTimeout(configuration.timeout)
            sessionConfiguration.timeoutIntervalForResource = Self.sessionTimeout(configuration.timeout)
            // Each call waits on Apple (~100 ms or more): as many calls in flight as clients waiting, within reason.
            sessionConfiguration.httpMaximumConnectionsPerHost = 256
            self.session = URLSession(configuration: sessionConfiguration)
        }
        self.observer = observer
    }

    /// URLSession's own limit, kept above `timeout`: swift-corelibs-foundation truncates request timeouts
    /// to whole seconds (0.5 s becomes 0 and every call fails at once; 1.5 s becomes 1 s), so the exact
    /// limit is enforced by `call`'s own timer and URLSession's only backs it up.
    static func sessionTimeout(_ timeout: Double) -> Double {
        timeout.rounded(.up) + 1
    }

    /// Validates base64 receipt data with Apple.
    public func verify(receiptData: String, now: Date = Date()) async -> ReceiptVerification {
        let key = Hex.encode(SHA256.hash(Array(receiptData.utf8)))
        if let hit = cache.withLock({ $0[key] }), hit.expires > now { return hit.result }
        // The first caller asks Apple; identical requests meanwhile wait for its answer instead of asking again.
        let result: ReceiptVerification
        let isFirst = inFlight.withLock { table -> Bool in
            if table[key] != nil { return false }
            table[key] = []
            return true
        }
        if isFirst {
            result = await resolve(receiptData: receiptData)
            // Cache first, then release the waiters: a caller arriving in between finds the answer cached.
            store(result, key: key, now: now)
            let waiters = inFlight.withLock { $0.removeValue(forKey: key) } ?? []
            for waiter in waiters { waiter.resume(returning: result) }
        } else {
            result = await withCheckedContinuation { (continuation: CheckedContinuation<ReceiptVerification, Never>) in
                let queued = inFlight.withLock { table -> Bool in
                    guard table[key] != nil else { return false }
                    table[key]!.append(continuation)
                    return true
                }
                if !queued {
                    // The first call finished in between: its answer is cached, unless it was not cacheable.
                    // An expired entry is no answer (the first call's result was not cacheable and an old one remains).
                    if let hit = cache.withLock({ $0[key] }), hit.expires > now { continuation.resume(returning: hit.result) } else {
                        continuation.resume(returning: .unavailable(appleStatus: nil, reason: "a concurrent identical request failed; try again"))
                    }
                }
            }
        }
        return result
    }

    /// Keeps final answers (valid or invalid) for `cacheLifetime`; never a transient failure.
    private func store(_ result: ReceiptVerification, key: String, now: Date) {
        switch result {
        case .valid, .invalid:
            // The same clock as the lookup above (`now`), so an injected clock governs both.
            let expires = now.addingTimeInterval(configuration.cacheLifetime)
            cache.withLock { table in
                if table.count >= configuration.cacheCapacity {
                    table = table.filter { $0.value.expires > now }
                    if table.count >= configuration.cacheCapacity { table.removeAll() }
                }
                table[key] = (expires, result)
            }
        case .unavailable, .misconfigured:
            break
        }
    }

    /// The request/retry state machine.
    private func resolve(receiptData: String) async -> ReceiptVerification {
        var endpoint = AppStoreEnvironment.production
        var retried = false
        var triedProduction = false
        var triedSandbox = false
        while true {
            if endpoint == .production { triedProduction = true } else { triedSandbox = true }
            let answer = await call(endpoint, receiptData: receiptData)
            let outcome: AppleOutcome
            var appleStatus: Int?
            switch answer {
            case .response(let response, let httpStatus):
                appleStatus = response.status
                outcome = AppleStatusPolicy.classify(status: response.status, isRetryable: response.isRetryable, httpStatus: httpStatus)
                if outcome.isValidReceipt { return .valid(response, environment: endpoint) }
            case .failed(let httpStatus, _):
                outcome = AppleStatusPolicy.classifyFailedResponse(httpStatus: httpStatus)
            }
            let reason: String = {
                if case .failed(_, let why) = answer { return why }
                return "Apple answered status \(appleStatus ?? -1)"
            }()
            switch outcome {
            case .ok, .okSubscriptionExpired:
                continue // handled above
            case .retryInSandbox:
                guard configuration.allowSandbox, !triedSandbox else {
                    return .invalid(appleStatus: appleStatus, reason: "a sandbox receipt, and sandbox purchases are not accepted")
                }
                endpoint = .sandbox
            case .retryInProduction:
                guard !triedProduction else { return .misconfigured(appleStatus: appleStatus, reason: "Apple sent status 21008 from production") }
                endpoint = .production
            case .retryOnceThenInvalid, .unavailable:
                guard !retried else {
                    return outcome == .unavailable ? .unavailable(appleStatus: appleStatus, reason: reason)
                                                   : .invalid(appleStatus: appleStatus, reason: reason)
                }
                retried = true
                try? await Task.sleep(for: .milliseconds(Int(configuration.retryBackoff * 1000)))
            case .invalid:
                return .invalid(appleStatus: appleStatus, reason: reason)
            case .misconfigured:
                return .misconfigured(appleStatus: appleStatus, reason: reason)
            }
        }
    }

    /// Starts work on `executor` when one is given (the server's worker pool), else as a plain task.
    private static func spawn(on executor: (any TaskExecutor)?, _ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
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

    private enum Answer: Sendable {
        case response(VerifyReceiptResponse, httpStatus: Int)
        case failed(httpStatus: Int?, reason: String)
    }

    /// One POST to one endpoint, bounded by the timeout.
    private func call(_ endpoint: AppStoreEnvironment, receiptData: String) async -> Answer {
        let url = endpoint == .production ? configuration.productionURL : configuration.sandboxURL
        var body: [String: Any] = ["receipt-data": receiptData, "exclude-old-transactions": true]
        if let secret = configuration.sharedSecret { body["password"] = secret }
        let bodyData = (try? JSONSerialization.data(withJSONObject: body)) ?? Data()
        let started = Date()
        let session = self.session
        let timeout = configuration.timeout
        // The request and the timer race; the loser is not waited for. The request is never cancelled:
        // cancelling URLSession tasks races inside swift-corelibs-foundation on Linux (a crash), so a late
        // answer is simply dropped, and URLSession's own timeout bounds it.
        let executor = self.executor
        let answer: Answer = await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            let gate = FirstAnswer(continuation)
            let timer = Self.spawn(on: executor) {
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                if !Task.isCancelled { gate.resume(.failed(httpStatus: nil, reason: "Apple did not answer within \(timeout) s")) }
            }
            _ = Self.spawn(on: executor) {
                var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData,
                                         timeoutInterval: Self.sessionTimeout(timeout))
                request.httpMethod = "POST"
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = bodyData
                let result: Answer
                do {
                    let (data, response) = try await session.data(for: request)
                    let httpStatus = (response as? HTTPURLResponse)?.statusCode ?? 0
                    if let parsed = try? VerifyReceiptResponse(json: data) {
                        result = .response(parsed, httpStatus: httpStatus)
                    } else {
                        result = .failed(httpStatus: httpStatus, reason: "Apple answered HTTP \(httpStatus) without a verifyReceipt body")
                    }
                } catch {
                    result = .failed(httpStatus: nil, reason: "no answer from Apple: \(error.localizedDescription)")
                }
                gate.resume(result)
                timer.cancel()
            }
        }
        let seconds = Date().timeIntervalSince(started)
        switch answer {
        case .response(let response, let httpStatus):
            observer?(httpStatus >= 200 && httpStatus < 300 ? "status_\(response.status)" : "http_\(httpStatus)", seconds)
        case .failed(let httpStatus, _):
            observer?(httpStatus.map { "http_\($0)" } ?? "no_answer", seconds)
        }
        return answer
    }
}
