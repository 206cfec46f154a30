import ArgumentParsing
import AppStore
import DepotCore
import DepotCrypto
import Foundation
import Ledger
public import Platform
public import Server

/// A running Depot: configuration, catalog store, ledger and HTTP server composed together.
public final class DepotApp: Sendable {
    public let configuration: DepotConfiguration
    let store: CatalogStore
    let server: HTTPServer
    let metrics: Metrics
    let ledger: Ledger?
    let logger: Logger

    /// The address clients connect to (with the real port when 0 was configured).
    public var address: SocketAddress { server.address }

    /// `http://HOST:PORT`.
    public var baseURL: String { "http://\(server.address)" }

    /// Validates the configuration, loads the catalog and starts serving.
    /// Throws `ConfigurationError` naming the option for anything unusable.
    /// `volumeSpace` answers free-space questions for publishing, uploads and `/healthz` (tests inject a small volume).
    public static func start(_ configuration: DepotConfiguration, logger: Logger = Logger(),
                             volumeSpace: any VolumeSpace = SystemVolumeSpace()) async throws -> DepotApp {
        let paths = configuration.paths
        for (option, directory) in [("catalog", paths.catalogDirectory), ("content", paths.contentDirectory)] {
            guard FileStatus.isDirectory(directory) || Self.isDirectoryFollowingLinks(directory) else {
                throw ConfigurationError(option: option, "\(directory) is not a readable directory")
            }
            guard access(directory, R_OK | X_OK) == 0 else {
                throw ConfigurationError(option: option, "\(directory) is not readable")
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: paths.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError(option: "data", "cannot create \(paths.dataDirectory)")
        }
        guard access(paths.dataDirectory, W_OK | X_OK) == 0 else {
            throw ConfigurationError(option: "data", "\(paths.dataDirectory) is not writable")
        }
        let key: [UInt8]
        do {
            key = try TokenKey.load(secret: configuration.tokenSecret, dataDirectory: paths.dataDirectory)
        } catch {
            throw ConfigurationError(option: configuration.tokenSecret == nil ? "data" : "token-secret", error.description)
        }
        let roots = try loadTrustedRoots(configuration.appleRootCertificateFiles)
        let ledger: Ledger
        do {
            ledger = try await Ledger.open(at: paths.dataDirectory + "/ledger.sqlite")
        } catch {
            throw ConfigurationError(option: "data", "cannot open the ledger: \(error)")
        }

        let loops = configuration.loops > 0 ? configuration.loops : System.coreCount
        let store = CatalogStore(paths: paths, cacheControl: configuration.listCacheControl, logger: logger, replicaCount: loops)
        if let problems = store.reload() {
            logger.error("starting without a usable catalog (\(problems.problems.count) problem(s)); fix the files and they are picked up")
        }
        let counter = ConnectionCounter()
        let metrics = Metrics(shardCount: loops, openConnections: { counter.value })
        let tokens = DownloadTokenAuthority(key: key)
        let access = LedgerAccess(ledger: ledger)
        let packs = PackRoutes(store: store, tokens: tokens, access: access, now: { Int64(Date().timeIntervalSince1970) },
                               loops: loops)
        let operations = OperationRoutes(store: store, metrics: metrics, paths: paths, space: volumeSpace,
                                         ledgerWritable: { await ledger.checkWritable() })
        let receiptVerifier = ReceiptVerifier(
            configuration: ReceiptVerifierConfiguration(productionURL: configuration.appleVerifyURL, sandboxURL: configuration.appleSandboxVerifyURL,
                                                        sharedSecret: configuration.appleSharedSecret, allowSandbox: configuration.allowSandbox,
                                                        timeout: configuration.appleTimeout),
            observer: { outcome, seconds in metrics.recordAppleCall(outcome: outcome, seconds: seconds) },
            executor: WorkerPool.shared)
        let signedData = SignedDataVerifier(trustedRoots: roots, bundleID: configuration.bundleID, allowSandbox: configuration.allowSandbox)
        let purchases = PurchaseService(store: store, ledger: ledger, receipts: receiptVerifier, signedData: signedData, tokens: tokens,
                                        tokenTTL: configuration.tokenTTL, policy: configuration.accountPolicy,
                                        bundleID: configuration.bundleID, sharedSecret: configuration.appleSharedSecret, logger: logger)
        let admin = configuration.adminToken.map {
            AdminService(adminToken: $0, publisher: Publisher(paths: paths, space: volumeSpace), store: store, logger: logger)
        }
        let lists = ProductListRoutes(store: store)
        let table = try DepotRoutes(lists: lists, packs: packs, operations: operations, purchases: purchases, admin: admin).table()
        let responder = DepotResponder(table: table, lists: lists)
        let serverConfiguration = ServerConfiguration(
            host: configuration.host, port: configuration.port, loopCount: loops, serverName: "depot",
            headerTimeoutMilliseconds: UInt64(configuration.headerTimeout * 1000),
            idleTimeoutMilliseconds: UInt64(configuration.idleTimeout * 1000),
            writeTimeoutMilliseconds: UInt64(configuration.writeTimeout * 1000),
            bodyBudgetBytes: configuration.bodyBudget << 20, bodyMinimumBytesPerSecond: configuration.bodyMinimumRate)
        let observer = ExchangeRecorder(metrics: metrics, accessLog: configuration.accessLog.isOn ? logger : nil)
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: serverConfiguration, responder: responder, observer: observer)
        } catch let error as SystemError {
            await ledger.close()
            throw ConfigurationError(option: "port", "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        } catch {
            await ledger.close()
            throw ConfigurationError(option: "host", "\(error)")
        }
        counter.server = server
        // After a swap every loop drops the files it opened from the old snapshot, busy with packs or not.
        store.onSwap { [weak server] in server?.onEachLoop { packs.syncCache(loop: $0) } }
        store.startWatching()
        return DepotApp(configuration: configuration, store: store, server: server, metrics: metrics, ledger: ledger, logger: logger)
    }

    private init(configuration: DepotConfiguration, store: CatalogStore, server: HTTPServer, metrics: Metrics,
                 ledger: Ledger?, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.server = server
        self.metrics = metrics
        self.ledger = ledger
        self.logger = logger
    }

    /// Stops accepting, lets in-flight requests finish (up to 10 s), then releases everything.
    public func stop() async {
        store.stopWatching()
        server.stop()
        await server.stopped()
        await ledger?.close()
        logger.output.flush()
    }

    /// Reloads the catalog and content now instead of waiting for the watcher (tests).
    @discardableResult
    public func reloadCatalog() -> Bool { store.reload() == nil }

    /// The configured trust anchors for JWS chains, or the shipped Apple Root CA - G3.
    static func loadTrustedRoots(_ files: [String]?) throws -> [X509Certificate] {
        guard let files, !files.isEmpty else { return [AppleRootCertificates.rootCAG3()] }
        var roots: [X509Certificate] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(option: "apple-root-certs", "cannot read \(file)")
            }
            do {
                let certificates = try X509Certificate.parsePEMOrDER([UInt8](data))
                guard !certificates.isEmpty else { throw ConfigurationError(option: "apple-root-certs", "no certificate in \(file)") }
                roots.append(contentsOf: certificates)
            } catch let error as ConfigurationError {
                throw error
            } catch {
                throw ConfigurationError(option: "apple-root-certs", "\(file) is not a DER or PEM certificate")
            }
        }
        return roots
    }

    private static func isDirectoryFollowingLinks(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

/// Lets the metrics read the server's connection count, which exists only after the server does.
final class ConnectionCounter: @unchecked Sendable {
    // Written once during start-up before any request can read it.
    nonisolated(unsafe) var server: HTTPServer?
    var value: Int { server?.openConnections ?? 0 }
}

/// The ledger's in-memory access index behind the pack routes' revocation check.
struct LedgerAccess: AccessChecker {
    let ledger: Ledger

    func isAllowed(originalTransactionID: String, account: String?) -> Bool {
        ledger.access(originalTransactionID: originalTransactionID, account: account) == .allowed
    }
}
