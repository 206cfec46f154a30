import DepotCore
import DepotWire
import DepotCrypto
import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Calls the App Store Server API (spec §2): every request carries a bearer JWT from the
/// configured key; each call has the `--apple-timeout` and at most one retry after a backoff
/// under a second for retryable failures (5xx, 429, error codes 4040002, 4040004, 4040006,
/// 5000001, timeouts, no connection; only a `429` is held to its `Retry-After`: one a second or more
/// away is not retried);
/// 401/403 are `misconfigured`; a transaction production does not know (`4040010`) is asked of
/// sandbox when sandbox is allowed. Every signed item of an answer is verified with the same
/// `SignedDataVerifier` as a JWS an app sends, and its environment must be the one that answered.
///
/// Same outbound path as `ReceiptVerifier`: URLSession's async API (tasks never cancelled), the
/// server's worker-pool executor, an observer for metrics. Results are `Result<_, ServerAPIFailure>`,
/// never an untyped error. The endpoints are in the extensions of this type.
public final class ServerAPIClient: Sendable {
    /// Sees every HTTP exchange: the endpoint (`transaction_history`, …), the outcome (`http_200`,
    /// `http_404_4040010`, `timeout`, `no_answer`, …) and its duration in seconds.
    public typealias CallObserver = @Sendable (_ endpoint: String, _ outcome: String, _ seconds: Double) -> Void

    public let configuration: ServerAPIConfiguration
    /// Verifies every signed item of an answer.
    public let verifier: SignedDataVerifier
    /// Signs (and reuses) the bearer tokens.
    public let tokens: ServerAPITokenIssuer
    private let session: BoundedHTTPSession
    private let observer: CallObserver?
    private let executor: (any TaskExecutor)?

    /// A client for the app `configuration.bundleID`. `verifier` should be the one the server uses
    /// for the JWS apps send (same roots, bundle, sandbox rule and app Apple ID).
    public init(configuration: ServerAPIConfiguration, key: ServerAPIKey, verifier: SignedDataVerifier,
                observer: CallObserver? = nil, executor: (any TaskExecutor)? = nil) {
        self.configuration = configuration
        self.verifier = verifier
        tokens = ServerAPITokenIssuer(key: key, bundleID: configuration.bundleID)
        self.session = AppleHTTPCall.makeSession(timeout: configuration.timeout)
        self.observer = observer
        self.executor = executor
    }

    // MARK: - Requests

    /// One API request, independent of the environment it goes to.
    struct Request: Sendable {
        /// The endpoint's name for the observer.
        var name: String
        var method = "GET"
        /// The path below the base URL, segments already escaped.
        var path: String
        var query: [(name: String, value: String)] = []
        var body: Data?
    }

    /// The answer of one call in one environment.
    enum Exchange: Sendable {
        case success(Data)
        /// `404` with `4040010`: this environment does not know the transaction.
        case transactionNotFound
        case failure(ServerAPIFailure)
    }

    /// Characters kept as they are in a path segment; anything else is percent-escaped.
    private static let segmentCharacters = CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// An identifier as a path segment: 1–128 characters of letters, digits and `-._~` (Apple's IDs
    /// are digits); anything else never reaches Apple.
    static func pathSegment(_ identifier: String, what: String) -> Result<String, ServerAPIFailure> {
        guard (1...128).contains(identifier.utf8.count),
              identifier.unicodeScalars.allSatisfy({ segmentCharacters.contains($0) }) else {
            return .failure(.invalid(check: .format, appleErrorCode: nil, reason: "the \(what) is not an App Store identifier"))
        }
        return .success(identifier)
    }

    /// Sends `request` to `environment`, with the one retry.
    func send(_ request: Request, to environment: AppStoreEnvironment, now: Date) async -> Exchange {
        guard let url = url(for: request, in: environment) else {
            return .failure(.misconfigured(httpStatus: nil, appleErrorCode: nil, reason: "the \(environment) base URL cannot take API paths"))
        }
        var retried = false
        while true {
            let token: String
            do {
                token = try tokens.token(now: now)
            } catch {
                return .failure(.unavailable(retryAfter: configuration.defaultRetryAfter, appleErrorCode: nil,
                                             reason: "the API token could not be signed: \(error.reason)"))
            }
            var urlRequest = URLRequest(url: url)
            urlRequest.httpMethod = request.method
            urlRequest.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            if let body = request.body {
                urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
                urlRequest.httpBody = body
            }
            let started = Date()
            let answer = await AppleHTTPCall.perform(urlRequest, session: session, timeout: configuration.timeout, executor: executor)
            let seconds = Date().timeIntervalSince(started)
            let failure: ServerAPIFailure
            let pause: Double?
            switch answer {
            case .answered(let status, let body, let retryAfter):
                let error = (200..<300).contains(status) ? nil : ServerAPIWire.decode(ServerAPIWire.ErrorPayload.self, from: body)
                observer?(request.name, "http_\(status)" + (error?.errorCode.map { "_\($0)" } ?? ""), seconds)
                let described = Self.describe(status: status, error: error, environment: environment, endpoint: request.name)
                switch ServerAPIStatusPolicy.classify(httpStatus: status, errorCode: error?.errorCode) {
                case .success:
                    return .success(body)
                case .transactionNotFound:
                    return .transactionNotFound
                case .misconfigured:
                    let hint = status == 401 || status == 403
                        ? " (check --apple-api-key, --apple-api-key-id, --apple-api-issuer and --bundle-id)" : " (check the API base URLs)"
                    return .failure(.misconfigured(httpStatus: status, appleErrorCode: error?.errorCode, reason: described + hint))
                case .invalid:
                    return .failure(.invalid(check: nil, appleErrorCode: error?.errorCode, reason: described))
                case .retryable:
                    let wait = retryAfter.flatMap { Self.retryAfterSeconds($0, now: Date()) }
                    failure = .unavailable(retryAfter: wait.map { max(1, Int($0.rounded(.up))) } ?? configuration.defaultRetryAfter,
                                           appleErrorCode: error?.errorCode, reason: described)
                    pause = ServerAPIStatusPolicy.retryPause(httpStatus: status, retryAfter: wait, backoff: configuration.retryBackoff,
                                                             longest: configuration.longestRetryWait)
                }
            case .noAnswer(let reason, let kind):
                observer?(request.name, kind == .timedOut ? "timeout" : "no_answer", seconds)
                failure = .unavailable(retryAfter: configuration.defaultRetryAfter, appleErrorCode: nil,
                                       reason: "\(request.name) (\(environment)): \(reason)")
                // A request libcurl has already resent (closed unanswered on a kept-alive connection, then on a
                // fresh one) is not sent a third time: that was its one retry.
                pause = kind == .closedUnanswered(resent: true) ? nil
                    : ServerAPIStatusPolicy.retryPause(httpStatus: nil, retryAfter: nil, backoff: configuration.retryBackoff,
                                                       longest: configuration.longestRetryWait)
            }
            // A 429 that asks for a longer pause than the backoff under a second is handed on, not retried.
            guard !retried, let pause else { return .failure(failure) }
            retried = true
            try? await Task.sleep(for: .milliseconds(Int(pause * 1000)))
        }
    }

    /// Sends a transaction lookup: production first, then sandbox on `4040010` when allowed. With
    /// `startingIn` sandbox (the transaction says where it lives) only sandbox is asked.
    func lookUp(_ request: Request, startingIn: AppStoreEnvironment?, what: String,
                now: Date) async -> Result<(body: Data, environment: AppStoreEnvironment), ServerAPIFailure> {
        let environments: [AppStoreEnvironment]
        if startingIn == .sandbox {
            guard configuration.allowSandbox else {
                return .failure(.invalid(check: .environment, appleErrorCode: nil, reason: "a sandbox \(what), and sandbox purchases are not accepted"))
            }
            environments = [.sandbox]
        } else {
            environments = configuration.allowSandbox ? [.production, .sandbox] : [.production]
        }
        for environment in environments {
            switch await send(request, to: environment, now: now) {
            case .success(let body): return .success((body, environment))
            case .transactionNotFound: continue
            case .failure(let failure): return .failure(failure)
            }
        }
        let reason = environments.count == 2 ? "neither production nor sandbox knows the \(what)"
            : environments == [.sandbox] ? "sandbox does not know the \(what)"
            : "production does not know the \(what), and sandbox is not asked (sandbox purchases are not accepted)"
        return .failure(.invalid(check: nil, appleErrorCode: ServerAPIStatusPolicy.transactionNotFoundCode, reason: reason))
    }

    private func url(for request: Request, in environment: AppStoreEnvironment) -> URL? {
        var base = configuration.baseURL(for: environment).absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard var components = URLComponents(string: base + request.path) else { return nil }
        if !request.query.isEmpty {
            components.queryItems = request.query.map { URLQueryItem(name: $0.name, value: $0.value) }
            // `+` means a space to many servers; Apple's tokens are base64.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        return components.url
    }

    /// `transaction_history (Production): HTTP 404, error 4040010 "Transaction id not found."`. Apple's
    /// message is cut to 200 printable characters.
    private static func describe(status: Int, error: ServerAPIWire.ErrorPayload?, environment: AppStoreEnvironment,
                                 endpoint: String) -> String {
        var text = "\(endpoint) (\(environment)): HTTP \(status)"
        if let code = error?.errorCode { text += ", error \(code)" }
        if let message = error?.errorMessage {
            let printable = String(String.UnicodeScalarView(message.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200)))
            text += " " + JSONText.string(printable)
        }
        return text
    }

    /// `Retry-After` (delta seconds, or an HTTP date) as seconds from `now`; nil when unreadable.
    static func retryAfterSeconds(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds.isFinite, seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: trimmed).map { max(0, $0.timeIntervalSince(now)) }
    }
}
