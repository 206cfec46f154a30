public import DepotCore
import DepotCrypto
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

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
    private let session: BoundedHTTPSession
    private let observer: CallObserver?
    /// Where the calls to Apple run (the server passes its worker pool); nil: plain tasks.
    private let executor: (any TaskExecutor)?
    private let cache: SharedResultCache<ReceiptVerification>

    public init(configuration: ReceiptVerifierConfiguration, observer: CallObserver? = nil,
                executor: (any TaskExecutor)? = nil) {
        self.configuration = configuration
        self.executor = executor
        self.session = AppleHTTPCall.makeSession(timeout: configuration.timeout)
        cache = SharedResultCache(lifetime: configuration.cacheLifetime, capacity: configuration.cacheCapacity) { result in
            switch result {
            case .valid, .invalid: true  // final answers; never a transient failure
            case .unavailable, .misconfigured: false
            }
        }
        self.observer = observer
    }

    /// Validations waiting for Apple now: each call in flight and the identical requests sharing it (answers
    /// from the cache never wait).
    public var waitingRequests: Int { cache.waiting }

    /// Validates base64 receipt data with Apple.
    public func verify(receiptData: String, now: Date = Date()) async -> ReceiptVerification {
        let key = Hex.encode(SHA256.hash(Array(receiptData.utf8)))
        return await cache.value(for: key, now: now,
                                 whenSharedFailed: .unavailable(appleStatus: nil, reason: "a concurrent identical request failed; try again")) {
            await resolve(receiptData: receiptData)
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
            case .failed(let httpStatus, _, let resent):
                outcome = AppleStatusPolicy.classifyFailedResponse(httpStatus: httpStatus)
                // libcurl has already sent it again on a fresh connection: that was its one retry.
                if resent { retried = true }
            }
            let reason: String = {
                if case .failed(_, let why, _) = answer { return why }
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

    private enum Answer: Sendable {
        case response(VerifyReceiptResponse, httpStatus: Int)
        /// `resent`: closed unanswered after libcurl resent it (``BoundedHTTPSession/NoAnswer/closedUnanswered(resent:)``).
        case failed(httpStatus: Int?, reason: String, resent: Bool = false)
    }

    /// One POST to one endpoint, bounded by the timeout.
    private func call(_ endpoint: AppStoreEnvironment, receiptData: String) async -> Answer {
        let url = endpoint == .production ? configuration.productionURL : configuration.sandboxURL
        var body: [String: Any] = ["receipt-data": receiptData, "exclude-old-transactions": true]
        if let secret = configuration.sharedSecret { body["password"] = secret }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = (try? JSONSerialization.data(withJSONObject: body)) ?? Data()
        let started = Date()
        let answer: Answer
        switch await AppleHTTPCall.perform(request, session: session, timeout: configuration.timeout, executor: executor) {
        case .answered(let httpStatus, let data, _):
            if let parsed = try? VerifyReceiptResponse(json: data) {
                answer = .response(parsed, httpStatus: httpStatus)
            } else {
                answer = .failed(httpStatus: httpStatus, reason: "Apple answered HTTP \(httpStatus) without a verifyReceipt body")
            }
        case .noAnswer(let reason, let kind):
            answer = .failed(httpStatus: nil, reason: reason, resent: kind == .closedUnanswered(resent: true))
        }
        let seconds = Date().timeIntervalSince(started)
        switch answer {
        case .response(let response, let httpStatus):
            observer?(httpStatus >= 200 && httpStatus < 300 ? "status_\(response.status)" : "http_\(httpStatus)", seconds)
        case .failed(let httpStatus, _, _):
            observer?(httpStatus.map { "http_\($0)" } ?? "no_answer", seconds)
        }
        return answer
    }
}
