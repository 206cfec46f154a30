public import Foundation
import Synchronization

/// The simulated App Store Server API (tests, benchmarks, `depot demo`): per-environment stores of
/// transactions that a test registers, with what Apple derives from them — the customer's history
/// (20 per page, `revision`/`hasMore`), subscription statuses with renewals, app receipts and iOS 6
/// transaction receipts, and a notification history (refunds and others, kept while no server
/// listens). Every call's JWT is checked as Apple checks it (`401` otherwise), answers are signed
/// with the store's run-time test PKI, unknown IDs are `404` `4040010`, and the next calls can be
/// told to fail. Reached through `SimulatedAppStore` (`apiURL`, `apiSandboxURL`).
public final class SimulatedServerAPI: Sendable {
    public typealias Environment = SimulatedAppStore.Environment

    struct RecordedNotification: Sendable {
        var uuid: String
        var type: String
        var environment: Environment
        var date: Date
        var signedPayload: String
        var sendAttempts: [(date: Date, result: String)] = []
        var testToken: String?
    }

    struct ScriptedFailure: Sendable {
        var endpoint: SimulatedEndpoint?
        var failure: SimulatedFailure
        var remaining: Int
    }

    /// A transaction as it was when it was signed, and its JWS.
    struct SignedCopy: Sendable {
        var transaction: SimulatedTransaction
        var jws: String
    }

    struct State: Sendable {
        var transactions: [SimulatedTransaction] = []
        /// Positions in `transactions` by customer, and of the first transaction with a given transaction or
        /// original transaction ID: lookups stay cheap with tens of thousands of purchases (the benchmark).
        var positionsByCustomer: [String: [Int]] = [:]
        var firstPositionByID: [String: Int] = [:]
        var signedOverrides: [String: String] = [:]
        /// Each transaction's signed form as answers carry it, signed once (when it was registered, or at the
        /// first answer after it changed) instead of per answer: valid while the transaction is unchanged.
        var signedCopies: [String: SignedCopy] = [:]
        var notifications: [RecordedNotification] = []
        var failures: [ScriptedFailure] = []
        var calls: [String: Int] = [:]
        var authenticationFailures: [String] = []
        var consumption: [RecordedConsumption] = []
        var keys: [String: SimulatedAPIKey] = [:]
        var nextTransactionID: Int64 = 2_000_000_900_000_000
        var notificationURL: URL?
        var answerBundleID: String?
        var omitsAppAppleID = false
        var historyPageSize = 20
        var notificationPageSize = 20
    }

    let state = Mutex(State())
    let stopping = Atomic<Bool>(false)
    let deliveries = Mutex<[Task<Void, Never>]>([])
    /// The app the store serves (`bid` of tokens, `bundleId` of everything it signs).
    public let bundleID: String
    /// The app's Apple ID, carried by Production answers and notifications.
    public let appAppleID: Int64
    /// The PKI whose leaf signs every JWS, receipt and notification.
    public let pki: TestPKI
    /// The key accepted from the start.
    public let key: SimulatedAPIKey
    /// Delay added to every answer (seconds).
    public let responseDelay: Double
    let signer: TransactionSigner
    let minter: ReceiptMinter
    /// Bearer tokens already accepted (their text), checked again only for their key and time window.
    let acceptedTokens = AcceptedTokenCache()
    /// How many accepted tokens the store remembers (tests).
    package var acceptedTokenCount: Int { acceptedTokens.count }
    let now: @Sendable () -> Date

    init(bundleID: String, appAppleID: Int64, pki: TestPKI, responseDelay: Double, now: @escaping @Sendable () -> Date) throws {
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.pki = pki
        self.responseDelay = responseDelay
        self.now = now
        signer = TransactionSigner(pki: pki)
        minter = ReceiptMinter(pki: pki, bundleID: bundleID)
        key = try SimulatedAPIKey.generate()
        state.withLock { $0.keys[key.keyID] = key }
    }

    // MARK: - Keys and settings

    /// Accepts tokens signed with `key` too (several keys of one team, or another issuer).
    public func accept(_ key: SimulatedAPIKey) {
        state.withLock { $0.keys[key.keyID] = key }
    }

    /// Stops accepting `keyID` (a revoked key).
    public func revokeKey(_ keyID: String) {
        _ = state.withLock { $0.keys.removeValue(forKey: keyID) }
    }

    /// Where notifications are POSTed (`{"signedPayload": …}`) as they happen, and test notifications
    /// go; nil keeps them in the history only (a server that is down).
    public var notificationURL: URL? {
        get { state.withLock { $0.notificationURL } }
        set { state.withLock { $0.notificationURL = newValue } }
    }

    /// Answers carry this `bundleId` instead of the app's (to test a misconfigured server).
    public var answerBundleID: String? {
        get { state.withLock { $0.answerBundleID } }
        set { state.withLock { $0.answerBundleID = newValue } }
    }

    /// Production answers leave `appAppleId` out (Apple's documentation marks it optional).
    public var omitsAppAppleID: Bool {
        get { state.withLock { $0.omitsAppAppleID } }
        set { state.withLock { $0.omitsAppAppleID = newValue } }
    }

    /// Transactions per history page (Apple: 20).
    public var historyPageSize: Int {
        get { state.withLock { $0.historyPageSize } }
        set { state.withLock { $0.historyPageSize = max(1, newValue) } }
    }

    /// Notifications per notification-history page.
    public var notificationPageSize: Int {
        get { state.withLock { $0.notificationPageSize } }
        set { state.withLock { $0.notificationPageSize = max(1, newValue) } }
    }

    // MARK: - Purchases

    /// Registers a purchase (and its `ONE_TIME_CHARGE` or `SUBSCRIBED` notification). The
    /// transaction ID is the next of a counter unless given; dates default to the store's clock.
    @discardableResult
    public func purchase(_ productID: String, type: SimulatedTransaction.ProductType = .nonConsumable, customer: String = "customer",
                         environment: Environment = .production, transactionID: String? = nil, purchaseDate: Date? = nil,
                         expiresDate: Date? = nil, subscriptionGroup: String? = nil, quantity: Int = 1,
                         appAccountToken: String? = nil) -> SimulatedTransaction {
        let date = purchaseDate ?? now()
        let transaction = state.withLock { s -> SimulatedTransaction in
            let id = transactionID ?? Self.nextID(&s)
            let subscription = type == .autoRenewable
            let transaction = SimulatedTransaction(
                transactionID: id, originalTransactionID: id, productID: productID, type: type, environment: environment,
                customer: customer, purchaseDate: date, originalPurchaseDate: date, expiresDate: expiresDate, quantity: quantity,
                transactionReason: "PURCHASE", subscriptionGroupIdentifier: subscription ? (subscriptionGroup ?? "group-1") : nil,
                webOrderLineItemID: subscription ? Self.nextID(&s) : nil, appAccountToken: appAccountToken)
            s.append(transaction)
            return transaction
        }
        presign(transaction)
        if type == .autoRenewable {
            notify("SUBSCRIBED", subtype: "INITIAL_BUY", about: transaction, at: date)
        } else {
            notify("ONE_TIME_CHARGE", about: transaction, at: date)
        }
        return transaction
    }

    /// Renews the subscription of `originalTransactionID`: a new transaction (`RENEWAL`) that runs
    /// until `expiresDate`, and a `DID_RENEW` notification. Nil when the original is unknown.
    @discardableResult
    public func renew(_ originalTransactionID: String, purchaseDate: Date? = nil, expiresDate: Date) -> SimulatedTransaction? {
        let date = purchaseDate ?? now()
        let renewal = state.withLock { s -> SimulatedTransaction? in
            guard var latest = s.transactions.last(where: { $0.originalTransactionID == originalTransactionID }) else { return nil }
            latest.transactionID = Self.nextID(&s)
            latest.webOrderLineItemID = Self.nextID(&s)
            latest.purchaseDate = date
            latest.expiresDate = expiresDate
            latest.revocationDate = nil
            latest.revocationReason = nil
            latest.transactionReason = "RENEWAL"
            s.append(latest)
            return latest
        }
        if let renewal {
            presign(renewal)
            notify("DID_RENEW", about: renewal, at: date)
        }
        return renewal
    }

    /// Refunds a transaction: it carries `revocationDate` from now on, and a `REFUND` notification is
    /// recorded (and POSTed when a notification URL is set). Returns the notification's UUID.
    @discardableResult
    public func refund(_ transactionID: String, at date: Date? = nil, reason: Int = 0) -> String? {
        revoke(transactionID, type: "REFUND", at: date ?? now(), reason: reason)
    }

    /// The customer asks for a refund of a transaction: a `CONSUMPTION_REQUEST` notification is recorded (and
    /// POSTed when a notification URL is set), which the developer answers with Send Consumption Information
    /// (`consumptionRequests`). Returns the notification's UUID; nil for an unknown transaction.
    @discardableResult
    public func requestRefund(_ transactionID: String, at date: Date? = nil) -> String? {
        guard let transaction = self.transaction(transactionID) else { return nil }
        return notify("CONSUMPTION_REQUEST", about: transaction, at: date ?? now())
    }

    /// The signed payload of a recorded notification (to post it again, as Apple redelivers).
    public func signedPayload(ofNotification uuid: String) -> String? {
        state.withLock { s in s.notifications.first { $0.uuid == uuid }?.signedPayload }
    }

    /// Ends Family Sharing access to a transaction (`REVOKE`). Returns the notification's UUID.
    @discardableResult
    public func revokeFamilySharing(_ transactionID: String, at date: Date? = nil) -> String? {
        revoke(transactionID, type: "REVOKE", at: date ?? now(), reason: 0)
    }

    /// Reverses a refund (`REFUND_REVERSED`): the transaction is no longer revoked.
    @discardableResult
    public func reverseRefund(_ transactionID: String, at date: Date? = nil) -> String? {
        let restored = state.withLock { s -> SimulatedTransaction? in
            guard let index = s.transactions.firstIndex(where: { $0.transactionID == transactionID }) else { return nil }
            s.transactions[index].revocationDate = nil
            s.transactions[index].revocationReason = nil
            return s.transactions[index]
        }
        return restored.map { notify("REFUND_REVERSED", about: $0, at: date ?? now()) }
    }

    private func revoke(_ transactionID: String, type: String, at date: Date, reason: Int) -> String? {
        let revoked = state.withLock { s -> SimulatedTransaction? in
            guard let index = s.transactions.firstIndex(where: { $0.transactionID == transactionID }) else { return nil }
            s.transactions[index].revocationDate = date
            s.transactions[index].revocationReason = reason
            return s.transactions[index]
        }
        return revoked.map { notify(type, about: $0, at: date) }
    }

    /// Every transaction of `customer` (all environments, in registration order).
    public func transactions(of customer: String) -> [SimulatedTransaction] {
        state.withLock { s in (s.positionsByCustomer[customer] ?? []).map { s.transactions[$0] } }
    }

    /// The transaction `transactionID`, as the store knows it now.
    public func transaction(_ transactionID: String) -> SimulatedTransaction? {
        state.withLock { s in
            s.firstPositionByID[transactionID].map { s.transactions[$0] }.flatMap { $0.transactionID == transactionID ? $0 : nil }
        }
    }

    /// The signed transaction an app would present for `transactionID` (StoreKit 2), signed now.
    public func signedTransaction(_ transactionID: String) throws -> String? {
        guard let transaction = transaction(transactionID) else { return nil }
        return try signer.sign(transaction.payload(bundleID: bundleID, signedDate: now()))
    }

    /// The signed form of `transaction` in answers: a replacement when a test set one, else the copy signed
    /// when it last changed (signed now when there is none, or the transaction changed since).
    func signed(_ transaction: SimulatedTransaction) -> String {
        let (override, copy) = state.withLock { ($0.signedOverrides[transaction.transactionID], $0.signedCopies[transaction.transactionID]) }
        if let override { return override }
        if let copy, copy.transaction == transaction { return copy.jws }
        return presign(transaction)
    }

    /// Signs `transaction` as answers will carry it (`signedDate` now) and keeps the copy.
    @discardableResult
    func presign(_ transaction: SimulatedTransaction) -> String {
        let jws = (try? signer.sign(transaction.payload(bundleID: bundleID, signedDate: now()))) ?? ""
        guard !jws.isEmpty else { return jws }  // a failure is not kept: the next answer tries again
        state.withLock { $0.signedCopies[transaction.transactionID] = SignedCopy(transaction: transaction, jws: jws) }
        return jws
    }

    /// Answers will carry `jws` instead of the genuine signed transaction (a tampered item).
    public func replaceSignedTransaction(_ transactionID: String, with jws: String) {
        state.withLock { $0.signedOverrides[transactionID] = jws }
    }

    // MARK: - Receipts

    /// An app receipt (base64 PKCS#7) holding every transaction of `customer` in `environment`.
    public func appReceipt(for customer: String, environment: Environment = .production) throws -> String {
        try minter.appReceipt(transactions(of: customer).filter { $0.environment == environment }, environment: environment, createdAt: now())
    }

    /// An app receipt holding exactly the given transactions (none: a receipt without purchases).
    public func appReceipt(transactionIDs: [String], environment: Environment = .production) throws -> String {
        let chosen = transactionIDs.compactMap { transaction($0) }
        return try minter.appReceipt(chosen, environment: environment, createdAt: now())
    }

    /// An iOS 6 transaction receipt (base64 old-style property list) for one transaction.
    public func transactionReceipt(_ transactionID: String) throws -> String? {
        guard let transaction = transaction(transactionID) else { return nil }
        return try minter.transactionReceipt(transaction)
    }

    // MARK: - Scripted failures and what the store saw

    /// The next `count` calls (to `endpoint`, or to any) get `failure` instead of their answer.
    public func failNext(_ count: Int, with failure: SimulatedFailure, endpoint: SimulatedEndpoint? = nil) {
        state.withLock { $0.failures.append(ScriptedFailure(endpoint: endpoint, failure: failure, remaining: count)) }
    }

    /// Drops the scripted failures not yet used: the store answers normally again.
    public func clearFailures() {
        state.withLock { $0.failures.removeAll() }
    }

    /// Calls received (authenticated or not), per endpoint and environment when given.
    public func calls(_ endpoint: SimulatedEndpoint? = nil, environment: Environment? = nil) -> Int {
        state.withLock { s in
            s.calls.filter { key, _ in
                let parts = key.split(separator: " ")
                return (endpoint == nil || parts[0] == endpoint!.rawValue) && (environment == nil || parts[1] == environment!.rawValue)
            }.values.reduce(0, +)
        }
    }

    /// Why each refused token was refused, in order.
    public var authenticationFailures: [String] { state.withLock { $0.authenticationFailures } }

    /// Send Consumption Information requests received, in order.
    public var consumptionRequests: [RecordedConsumption] { state.withLock { $0.consumption } }

    /// The UUIDs and types of the recorded notifications of `environment`, in order.
    public func notifications(in environment: Environment) -> [(uuid: String, type: String)] {
        state.withLock { $0.notifications.filter { $0.environment == environment }.map { ($0.uuid, $0.type) } }
    }

    /// Waits until every notification POST started so far has finished.
    public func waitForDeliveries() async {
        let pending = deliveries.withLock { tasks -> [Task<Void, Never>] in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in pending { await task.value }
    }

    /// The transactions of the customer behind `id` (a transaction or original transaction ID) in `environment`,
    /// in registration order; nil when `environment` has no such transaction.
    static func customerTransactions(of id: String, environment: Environment, in state: State) -> [SimulatedTransaction]? {
        guard let position = state.firstPositionByID[id] else { return nil }
        let customer = state.transactions[position].customer
        let all = (state.positionsByCustomer[customer] ?? []).map { state.transactions[$0] }
        guard all.contains(where: { $0.environment == environment && ($0.transactionID == id || $0.originalTransactionID == id) }) else {
            return nil
        }
        return all.filter { $0.environment == environment }
    }

    static func nextID(_ state: inout State) -> String {
        state.nextTransactionID += 1
        return String(state.nextTransactionID)
    }
}

extension SimulatedServerAPI.State {
    /// Adds a transaction and indexes it.
    mutating func append(_ transaction: SimulatedTransaction) {
        positionsByCustomer[transaction.customer, default: []].append(transactions.count)
        if firstPositionByID[transaction.transactionID] == nil { firstPositionByID[transaction.transactionID] = transactions.count }
        if firstPositionByID[transaction.originalTransactionID] == nil { firstPositionByID[transaction.originalTransactionID] = transactions.count }
        transactions.append(transaction)
    }
}
