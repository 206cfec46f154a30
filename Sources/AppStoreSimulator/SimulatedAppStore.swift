public import Foundation
import HTTP
import Server
import Synchronization

/// A loopback stand-in for the App Store (tests, benchmarks and `depot demo`). It answers `verifyReceipt`
/// for the opaque receipts it issues the way Apple does — numbers and dates as strings, `21007` for a
/// sandbox receipt sent to production, `21008` the other way round, `21004` for a wrong shared secret —
/// with scripted statuses, HTTP errors and delays on demand; and it serves the App Store Server API
/// (`serverAPI`, below `apiURL` and `apiSandboxURL`). Depot talks to it over plain HTTP exactly as to
/// Apple; only the URLs differ.
public final class SimulatedAppStore: Sendable {
    public enum Environment: String, Sendable {
        case production = "Production"
        case sandbox = "Sandbox"
    }

    /// One purchase inside an issued receipt.
    public struct Purchase: Sendable {
        public var productID: String
        public var transactionID: String
        public var originalTransactionID: String
        public var purchaseDate: Date
        public var expiresDate: Date?
        public var cancellationDate: Date?
        public var quantity: Int

        public init(productID: String, transactionID: String, originalTransactionID: String? = nil, purchaseDate: Date = Date(),
                    expiresDate: Date? = nil, cancellationDate: Date? = nil, quantity: Int = 1) {
            self.productID = productID
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID ?? transactionID
            self.purchaseDate = purchaseDate
            self.expiresDate = expiresDate
            self.cancellationDate = cancellationDate
            self.quantity = quantity
        }
    }

    /// How the store answers for one receipt.
    public struct Behaviour: Sendable {
        /// Statuses answered on successive calls before the normal answer (e.g. `[21005]` once, then 0).
        public var statuses: [Int] = []
        /// Answer every call with this status instead of 0.
        public var alwaysStatus: Int?
        /// `is-retryable` sent with the scripted statuses.
        public var isRetryable: Bool?
        /// Answer every call with this HTTP status and a non-JSON body.
        public var httpStatus: Int?
        /// Wait this long before answering (seconds).
        public var delay: Double = 0
        /// Answer only once this gate is open (after `delay`).
        public var gate: SimulatedAnswerGate?

        public init(statuses: [Int] = [], alwaysStatus: Int? = nil, isRetryable: Bool? = nil, httpStatus: Int? = nil, delay: Double = 0,
                    gate: SimulatedAnswerGate? = nil) {
            self.statuses = statuses
            self.alwaysStatus = alwaysStatus
            self.isRetryable = isRetryable
            self.httpStatus = httpStatus
            self.delay = delay
            self.gate = gate
        }
    }

    struct Receipt: Sendable {
        var bundleID: String
        var environment: Environment
        var purchases: [Purchase]
        var behaviour: Behaviour
    }

    struct State: Sendable {
        var receipts: [String: Receipt] = [:]
        var calls: [String: Int] = [:]
        var productionCalls = 0
        var sandboxCalls = 0
        var lastBody: [String: String] = [:]
        var lastRawBody: [UInt8]?
        var stopping = false
    }

    private let state = Mutex(State())
    private let server: HTTPServer
    public let bundleID: String
    public let sharedSecret: String?
    /// Delay added to every answer (seconds), e.g. 0.1 for the benchmark.
    public let responseDelay: Double

    /// The simulated App Store Server API: its transactions, receipts, notifications and keys.
    public let serverAPI: SimulatedServerAPI

    /// `http://HOST:PORT`.
    public var baseURL: URL { URL(string: "http://\(server.address)")! }
    public var productionURL: URL { URL(string: "http://\(server.address)/verifyReceipt")! }
    public var sandboxURL: URL { URL(string: "http://\(server.address)/sandbox/verifyReceipt")! }
    /// The Server API's production base URL (`--apple-api-url`).
    public var apiURL: URL { URL(string: "http://\(server.address)")! }
    /// The Server API's sandbox base URL (`--apple-api-sandbox-url`).
    public var apiSandboxURL: URL { URL(string: "http://\(server.address)/sandbox")! }

    /// Starts the store on `host`:`port` (by default a free loopback port). The Server API signs with `pki` (by
    /// default a fresh one valid from two years before `now()` to ten years after), puts `appAppleID` into its
    /// Production data, and reads time from `now` (token checks, dates of what it records).
    public init(bundleID: String, sharedSecret: String? = nil, responseDelay: Double = 0, appAppleID: Int64 = 1_234_567_890,
                pki: TestPKI? = nil, host: String = "127.0.0.1", port: Int = 0,
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.bundleID = bundleID
        self.sharedSecret = sharedSecret
        self.responseDelay = responseDelay
        let start = now()
        let signingPKI = try pki ?? TestPKI.generate(validFrom: start.addingTimeInterval(-2 * 365 * 86_400),
                                                    validUntil: start.addingTimeInterval(10 * 365 * 86_400))
        serverAPI = try SimulatedServerAPI(bundleID: bundleID, appAppleID: appAppleID, pki: signingPKI,
                                           responseDelay: responseDelay, now: now)
        let responder = SimulatedAppStoreResponder()
        server = try HTTPServer(configuration: ServerConfiguration(host: host, port: port, loopCount: 1), responder: responder)
        responder.store.withLock { $0 = self }
    }

    /// Stops the store. Answers still waiting out a delay are sent at once, so stopping never waits for them.
    public func stop() async {
        state.withLock { $0.stopping = true }
        serverAPI.stopping.store(true, ordering: .relaxed)
        server.stop()
        await server.stopped()
    }

    /// Issues a receipt and returns its base64 receipt data (what an app would send).
    public func issueReceipt(_ purchases: [Purchase], environment: Environment = .production, bundleID: String? = nil,
                             behaviour: Behaviour = Behaviour()) -> String {
        let id = UUID().uuidString
        state.withLock { $0.receipts[id] = Receipt(bundleID: bundleID ?? self.bundleID, environment: environment,
                                                   purchases: purchases, behaviour: behaviour) }
        return Data("{\"simulated-receipt\":\"\(id)\"}".utf8).base64EncodedString()
    }

    /// Answers `verifyReceipt` for `receipt` (base64 receipt data the store minted, such as an app receipt of its
    /// Server API) with `purchases`.
    func accept(receipt: String, environment: Environment, purchases: [Purchase]) {
        state.withLock { $0.receipts[receipt] = Receipt(bundleID: bundleID, environment: environment, purchases: purchases,
                                                        behaviour: Behaviour()) }
    }

    /// Marks a transaction refunded: answers from now on carry `cancellation_date_ms`.
    public func refund(transactionID: String, at date: Date = Date()) {
        state.withLock { s in
            for (id, var receipt) in s.receipts {
                for i in receipt.purchases.indices where receipt.purchases[i].transactionID == transactionID {
                    receipt.purchases[i].cancellationDate = date
                }
                s.receipts[id] = receipt
            }
        }
    }

    /// Calls received for a receipt (both endpoints).
    public func calls(forReceipt receiptData: String) -> Int {
        guard let id = Self.receiptID(receiptData) else { return 0 }
        return state.withLock { $0.calls[id] ?? 0 }
    }

    /// Calls received per endpoint.
    public var callCounts: (production: Int, sandbox: Int) {
        state.withLock { ($0.productionCalls, $0.sandboxCalls) }
    }

    /// The last request body's string fields (`receipt-data`, `password`, ...), for checking what Depot sent.
    public var lastRequestFields: [String: String] { state.withLock { $0.lastBody } }

    /// The last request body exactly as received (to check JSON types, e.g. that
    /// `exclude-old-transactions` is the literal `true`).
    public var lastRequestBody: [UInt8]? { state.withLock { $0.lastRawBody } }

    /// The key of `receiptData` among the store's receipts: the ID inside an issued one, else the data itself (a
    /// receipt `accept(receipt:environment:purchases:)` took).
    static func receiptID(_ receiptData: String) -> String? {
        guard let data = Data(base64Encoded: receiptData),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return receiptData }
        return object["simulated-receipt"] as? String
    }

    /// The answer to one POST.
    func answer(body: [UInt8], sandboxEndpoint: Bool) async -> Response {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return Self.json(["status": 21000])
        }
        let receiptData = object["receipt-data"] as? String ?? ""
        let password = object["password"] as? String
        var fields: [String: String] = [:]
        for (key, value) in object { fields[key] = "\(value)" }
        let id = Self.receiptID(receiptData)
        let (receipt, call): (Receipt?, Int) = state.withLock { s in
            s.lastBody = fields
            s.lastRawBody = body
            if sandboxEndpoint { s.sandboxCalls += 1 } else { s.productionCalls += 1 }
            guard let id, let receipt = s.receipts[id] else { return (nil, 0) }
            let n = s.calls[id, default: 0]
            s.calls[id] = n + 1
            return (receipt, n)
        }
        let delay = max(responseDelay, receipt?.behaviour.delay ?? 0)
        if delay > 0 { await pause(delay) }
        if let gate = receipt?.behaviour.gate { await hold(until: gate) }
        guard let receipt else { return Self.json(["status": 21002]) }
        if let sharedSecret, password != sharedSecret { return Self.json(["status": 21004]) }
        if let http = receipt.behaviour.httpStatus {
            return Response(status: http, headers: ["Content-Type": "text/html"], body: .bytes(Array("<html>error</html>".utf8)))
        }
        if receipt.environment == .sandbox && !sandboxEndpoint { return Self.json(["status": 21007]) }
        if receipt.environment == .production && sandboxEndpoint { return Self.json(["status": 21008]) }
        if call < receipt.behaviour.statuses.count || receipt.behaviour.alwaysStatus != nil {
            let status = call < receipt.behaviour.statuses.count ? receipt.behaviour.statuses[call] : receipt.behaviour.alwaysStatus!
            if status != 0 {
                var answer: [String: Any] = ["status": status]
                if let retryable = receipt.behaviour.isRetryable { answer["is-retryable"] = retryable }
                if status == 21006 { answer.merge(Self.receiptBody(receipt, receiptData: receiptData)) { $1 } }
                return Self.json(answer)
            }
        }
        var answer = Self.receiptBody(receipt, receiptData: receiptData)
        answer["status"] = 0
        return Self.json(answer)
    }

    /// Waits `seconds`, or less once `stop()` was called.
    private func pause(_ seconds: Double) async {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        while clock.now < deadline, !state.withLock({ $0.stopping }) {
            try? await Task.sleep(for: min(.milliseconds(50), deadline - clock.now))
        }
    }

    /// Waits until `gate` is open, or `stop()` was called.
    private func hold(until gate: SimulatedAnswerGate) async {
        while !gate.isOpen, !state.withLock({ $0.stopping }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    static func receiptBody(_ receipt: Receipt, receiptData: String) -> [String: Any] {
        let purchases = receipt.purchases.map(purchaseObject)
        return [
            "environment": receipt.environment.rawValue,
            "receipt": [
                "receipt_type": receipt.environment == .production ? "Production" : "ProductionSandbox",
                "bundle_id": receipt.bundleID,
                "application_version": "1",
                "in_app": purchases,
            ] as [String: Any],
            "latest_receipt_info": purchases.filter { $0["expires_date_ms"] != nil },
            "latest_receipt": receiptData,
        ]
    }

    /// Apple sends every number and date as a string.
    static func purchaseObject(_ p: Purchase) -> [String: Any] {
        func ms(_ date: Date) -> String { String(Int64(date.timeIntervalSince1970 * 1000)) }
        func text(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            return formatter.string(from: date) + " Etc/GMT"
        }
        var object: [String: Any] = [
            "quantity": String(p.quantity),
            "product_id": p.productID,
            "transaction_id": p.transactionID,
            "original_transaction_id": p.originalTransactionID,
            "purchase_date": text(p.purchaseDate),
            "purchase_date_ms": ms(p.purchaseDate),
            "original_purchase_date_ms": ms(p.purchaseDate),
            "is_trial_period": "false",
            "in_app_ownership_type": "PURCHASED",
        ]
        if let expires = p.expiresDate {
            object["expires_date"] = text(expires)
            object["expires_date_ms"] = ms(expires)
        }
        if let cancelled = p.cancellationDate {
            object["cancellation_date"] = text(cancelled)
            object["cancellation_date_ms"] = ms(cancelled)
            object["cancellation_reason"] = "0"
        }
        return object
    }

    static func json(_ object: [String: Any], status: Int = 200) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        return Response(status: status, headers: ["Content-Type": "application/json"], body: .bytes([UInt8](data)))
    }
}
