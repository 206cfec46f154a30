import AppStoreSimulator
import ArgumentParsing
import DepotServer
import DepotTestSupport
import DepotWire
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A Depot server wired to a simulated App Store (`verifyReceipt` on loopback) and trusting a run-time
/// test PKI for JWS, plus the requests the purchase tests send.
///
/// Every socket exchange runs on a thread of its own (`OffPool.run`): the raw test client blocks, and
/// blocking Swift's small cooperative pool would starve the server's own tasks on a 2-core machine.
final class PurchaseFixture: @unchecked Sendable {
    static let bundleID = "com.example.depot"
    static let level2 = "com.example.depot.level2"
    static let seasonPass = "com.example.depot.seasonpass"
    static let coins = "com.example.depot.coins100"
    static let hints = "com.example.depot.hints30"

    let apple: SimulatedAppStore
    let pki: TestPKI
    let signer: TransactionSigner
    /// The server (replaced by `restartDepot`).
    private(set) var depot: TestDepot
    /// Holds the trusted root's PEM file (`root.pem`) and, with the Server API, the key file.
    let certificates: TemporaryDirectory

    private init(apple: SimulatedAppStore, pki: TestPKI, depot: TestDepot, certificates: TemporaryDirectory) {
        self.apple = apple
        self.pki = pki
        signer = TransactionSigner(pki: pki)
        self.depot = depot
        self.certificates = certificates
    }

    /// Starts the simulated store (answering for `appleBundleID`, requiring `appleSecret` when set) and a
    /// Depot pointed at it, trusting a fresh `TestPKI` root (which the store's Server API signs with too), with
    /// `appleSharedSecret = appleSecret`. With `serverAPI`, Depot has the store's In-App Purchase key and its
    /// Server API URLs (the notification catch-up off unless `configure` turns it on, Apple given 60 s a call). `configure` runs last
    /// and may change anything (e.g. point the URLs elsewhere).
    static func start(appleSecret: String? = nil, appleBundleID: String = bundleID, pki existing: TestPKI? = nil,
                      serverAPI: Bool = false, tree existingTree: TemporaryDirectory? = nil,
                      configure: (inout DepotConfiguration) -> Void = { _ in }) async throws -> PurchaseFixture {
        let now = Date()
        let pki = try existing ?? TestPKI.generate(validFrom: now.addingTimeInterval(-365 * 86_400),
                                                   validUntil: now.addingTimeInterval(365 * 86_400))
        let apple = try SimulatedAppStore(bundleID: appleBundleID, sharedSecret: appleSecret, pki: pki)
        let certificates = TemporaryDirectory("depot-roots")
        certificates.write("root.pem", pki.rootPEM)
        let rootFile = certificates.path + "/root.pem"
        let keyFile = serverAPI ? try apple.serverAPI.key.writeKeyFile(into: certificates.path) : nil
        let key = apple.serverAPI.key
        // The sample is copied with a child process that blocks its thread: keep that off the cooperative
        // pool, which the servers' own tasks and timers need.
        let tree = existingTree ?? TemporaryDirectory("depot-server")
        let treePath = tree.path
        let depot: TestDepot
        do {
            if existingTree == nil { try await OffPool.run { try TestDepot.copySample(into: treePath) } }
            depot = try await TestDepot.start(tree: tree) { configuration in
                configuration.appleVerifyURL = apple.productionURL
                configuration.appleSandboxVerifyURL = apple.sandboxURL
                configuration.appleSharedSecret = appleSecret
                configuration.appleRootCertificateFiles = [rootFile]
                configuration.accessLog = .off
                if let keyFile {
                    configuration.appleAPIKeyFile = keyFile
                    configuration.appleAPIKeyID = key.keyID
                    configuration.appleAPIIssuer = key.issuerID
                    configuration.appleAPIURL = apple.apiURL
                    configuration.appleAPISandboxURL = apple.apiSandboxURL
                    configuration.notificationSync = 0
                }
                // Tests count Apple's calls exactly (verifyReceipt and the Server API alike); on a saturated
                // machine the default 10 s can pass and add a retry (a second call for one receipt was seen).
                // Tests of the timeout set their own.
                configuration.appleTimeout = 60
                configure(&configuration)
            }
        } catch {
            await apple.stop()
            throw error
        }
        return PurchaseFixture(apple: apple, pki: pki, depot: depot, certificates: certificates)
    }

    /// Starts a fixture (see `start`), runs `body` with it, and stops it whatever `body` does.
    static func run(appleSecret: String? = nil, appleBundleID: String = bundleID, pki: TestPKI? = nil, serverAPI: Bool = false,
                    configure: (inout DepotConfiguration) -> Void = { _ in },
                    _ body: (PurchaseFixture) async throws -> Void) async throws {
        let fixture = try await start(appleSecret: appleSecret, appleBundleID: appleBundleID, pki: pki, serverAPI: serverAPI,
                                      configure: configure)
        do {
            try await body(fixture)
        } catch {
            await fixture.stop()
            throw error
        }
        await fixture.stop()
    }

    func stop() async {
        await depot.stop()
        await apple.stop()
    }

    /// Stops the server, runs `between` while no server is up (the store keeps running), and starts the
    /// server again on the same tree and data directory (the ledger kept), with the same configuration
    /// changed by `configure`.
    func restartDepot(between: () async throws -> Void = {}, configure: (inout DepotConfiguration) -> Void = { _ in }) async throws {
        let configuration = depot.app.configuration
        await depot.stop()
        try await between()
        depot = try await TestDepot.start(tree: depot.tree) { replacement in
            replacement = configuration
            configure(&replacement)
        }
    }

    // MARK: - Requests

    /// `POST path` with a body (and `Content-Type`, unless nil).
    /// `timeout` bounds the wait for the answer (tests that hold Apple's answer on purpose give more).
    func post(_ path: String, body: [UInt8], contentType: String? = "application/json",
              timeout: Double = 20) async throws -> RawResponse {
        var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body
        let port = depot.port
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(request)
            return try connection.readResponse(timeout: timeout)
        }
    }

    func post(_ path: String, json: String) async throws -> RawResponse {
        try await post(path, body: Array(json.utf8))
    }

    /// `POST /v1/receipts` with a receipt.
    func postReceipt(_ receipt: String, account: String? = nil, timeout: Double = 20) async throws -> RawResponse {
        var object: [String: Any] = ["receipt": receipt]
        object["account"] = account
        return try await post(WirePath.receipts.pattern, body: Self.jsonBytes(object), timeout: timeout)
    }

    /// `POST /v1/receipts` with StoreKit 2 signed transactions.
    func postTransactions(_ transactions: [String], account: String? = nil) async throws -> RawResponse {
        var object: [String: Any] = ["transactions": transactions]
        object["account"] = account
        return try await post(WirePath.receipts.pattern, body: Self.jsonBytes(object))
    }

    /// `POST /v1/notifications/appstore`.
    func notify(_ object: [String: Any]) async throws -> RawResponse {
        try await post(WirePath.notifications.pattern, body: Self.jsonBytes(object))
    }

    /// `POST /v1/notifications/appstore` with a V2 `signedPayload`.
    func notify(signedPayload: String) async throws -> RawResponse {
        try await notify(["signedPayload": signedPayload])
    }

    /// `GET path`, with the token as `Authorization: Bearer` when given.
    func get(_ path: String, token: String? = nil) async throws -> RawResponse {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let depot = self.depot
        let fields = headers
        return try await OffPool.run { try depot.get(path, fields) }
    }

    /// The status of `GET /v1/packs/<pack>/manifest` with `token` (307 when the token is honoured).
    func packStatus(_ pack: String, token: String) async throws -> RawResponse {
        try await get(WirePath.packManifest(pack: pack), token: token)
    }

    // MARK: - Purchases

    private static let serial = Atomic<Int>(0)

    /// A fresh numeric transaction ID, unique in this process.
    static func transactionID() -> String {
        let n = serial.add(1, ordering: .relaxed).newValue
        return String(2_000_000_000_000_000 + Int(Date().timeIntervalSince1970) % 1_000_000 * 1_000 + n)
    }

    /// A receipt purchase of `product` bought a day ago (whole seconds, so dates compare exactly).
    static func purchase(_ product: String = level2, id: String = transactionID(), original: String? = nil,
                         purchaseDate: Date? = nil, expires: Date? = nil,
                         cancelled: Date? = nil) -> SimulatedAppStore.Purchase {
        SimulatedAppStore.Purchase(productID: product, transactionID: id, originalTransactionID: original,
                                   purchaseDate: purchaseDate ?? wholeSeconds(Date().addingTimeInterval(-86_400)),
                                   expiresDate: expires, cancellationDate: cancelled)
    }

    /// A StoreKit 2 transaction of `product`, signed an hour ago for this bundle.
    static func transaction(_ product: String = level2, id: String = transactionID(), bundleId: String = bundleID,
                            environment: String = "Production", signedDate: Date? = nil, expires: Date? = nil,
                            revoked: Date? = nil) -> TransactionSigner.Transaction {
        let now = Date()
        return TransactionSigner.Transaction(
            transactionId: id, bundleId: bundleId, productId: product,
            purchaseDate: wholeSeconds(now.addingTimeInterval(-86_400)),
            signedDate: signedDate ?? wholeSeconds(now.addingTimeInterval(-3_600)),
            type: expires == nil ? "Non-Consumable" : "Auto-Renewable Subscription", environment: environment,
            expiresDate: expires, revocationDate: revoked)
    }

    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    static func jsonBytes(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
}

extension RawResponse {
    /// The body as a JSON object (empty when it is not one).
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    /// `error.code` of an error body.
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }

    /// `error.message` of an error body.
    var errorMessage: String? { (object["error"] as? [String: Any])?["message"] as? String }

    /// The `entitlements` array of a `200` from `/v1/receipts`.
    var entitlements: [[String: Any]] { object["entitlements"] as? [[String: Any]] ?? [] }

    /// The `rejected` array of a `200` from `/v1/receipts`.
    var rejected: [[String: Any]] { object["rejected"] as? [[String: Any]] ?? [] }

    /// The first entitlement's token.
    var token: String? { entitlements.first?["token"] as? String }

    /// `(productId, reason)` of every rejection.
    var rejections: [Rejection] {
        rejected.map { Rejection(product: $0["productId"] as? String ?? "", reason: $0["reason"] as? String ?? "") }
    }

    /// A short description for failure messages.
    var summary: String { "\(status) \(text.prefix(400))" }
}

/// One entry of `rejected`.
struct Rejection: Equatable, CustomStringConvertible {
    var product: String
    var reason: String
    var description: String { "\(product): \(reason)" }
}
