import ArgumentParsing
import AppStore
import DepotCore
import DepotCrypto
public import Foundation
package import Ledger
public import Platform
public import Server

/// A running Depot: configuration, catalog store, ledger and HTTP server composed together.
public final class DepotApp: Sendable {
    public let configuration: DepotConfiguration
    /// The catalog store (the live snapshot and its swaps).
    package let store: CatalogStore
    /// The main listener.
    package let server: HTTPServer
    /// The ops listener (`--ops-listen`), when configured.
    let opsServer: HTTPServer?
    let dataLock: DataDirectoryLock
    let metrics: Metrics
    /// The ledger, when one is configured.
    package let ledger: Ledger?
    /// The purchase records (delivery record, webhooks, consumption answers), when a ledger is configured.
    package let records: PurchaseRecords?
    /// The server's logger (its output is what the server logged).
    package let logger: Logger
    /// The notification catch-up, when a key is configured (it runs by itself when `--notification-sync` is
    /// above 0).
    let notificationSync: NotificationSync?
    /// The per-minute traffic ring behind the console's charts.
    let traffic: TrafficHistory

    /// The address clients connect to (with the real port when 0 was configured).
    public var address: SocketAddress { server.address }

    /// `http://HOST:PORT`.
    public var baseURL: String { "http://\(server.address)" }

    /// The ops listener's `http://HOST:PORT`, when one is configured.
    public var opsURL: String? { opsServer.map { "http://\($0.address)" } }

    /// Validates the configuration, loads the catalog and starts serving.
    /// Throws `ConfigurationError` naming the option for anything unusable.
    /// `volumeSpace` answers free-space questions for publishing, uploads and `/healthz` (tests inject a small volume).
    public static func start(_ configuration: DepotConfiguration, logger: Logger = Logger(),
                             volumeSpace: any VolumeSpace = SystemVolumeSpace()) async throws -> DepotApp {
        try await start(configuration, logger: logger, volumeSpace: volumeSpace, versionReader: .system)
    }

    /// ``start(_:logger:volumeSpace:)`` with the admin API's publisher reading a pack's newest version with
    /// `versionReader` (a test's holds the read to see where the admin routes read the disk), and pack files
    /// opened with `packFileOpener` (a test's holds the open to see where it runs).
    package static func start(_ configuration: DepotConfiguration, logger: Logger, volumeSpace: any VolumeSpace,
                              versionReader: Publisher.VersionReader, packFileOpener: PackFileOpener = .system) async throws -> DepotApp {
        // The given logger says where lines go; the configuration how they look.
        let logger = Logger(output: logger.output, format: configuration.logFormat)
        logger.output.adopt(configuration.logFormat)
        if let conflict = configuration.conflictingOptions { throw conflict }
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
        // One server per data directory (held until stop).
        let dataLock = try DataDirectoryLock.acquire(dataDirectory: paths.dataDirectory)
        var started = false
        defer { if !started { dataLock.release() } }
        let roots = try loadTrustedRoots(configuration.appleRootCertificateFiles)
        let apiSettings = try ServerAPISettings.resolve(configuration)
        let ledger = try await openLedger(configuration)
        let key: [UInt8]
        do {
            key = try await tokenKey(configuration, ledger: ledger)
        } catch {
            await ledger.close()
            throw error
        }

        let loops = configuration.loops > 0 ? configuration.loops : System.coreCount
        let store = CatalogStore(paths: paths, cacheControl: configuration.listCacheControl, logger: logger, replicaCount: loops)
        if let problems = store.reload() {
            logger.error(.lifecycle, "starting without a usable catalog (\(problems.problems.count) problem(s)); fix the files and they are picked up")
        }
        let counter = ConnectionCounter()
        let metrics = Metrics(shardCount: loops, openConnections: { counter.value }, ledger: ledger)
        let tokens = DownloadTokenAuthority(key: key)
        let access = LedgerAccess(ledger: ledger, staleMax: configuration.ledgerStaleMax)
        let packs = PackRoutes(store: store, tokens: tokens, access: access, now: { Int64(Date().timeIntervalSince1970) },
                               loops: loops, tagsDeliveries: configuration.deliveryRecord.isOn, opener: packFileOpener)
        // The parts of /healthz, in the order they report (a new part is one more entry).
        let health = HealthCheck(contributors: [
            CatalogHealth(store: store),
            DiskHealth(paths: paths, space: volumeSpace),
            LedgerHealth(ledger: ledger, staleMax: configuration.ledgerStaleMax),
        ])
        let operations = OperationRoutes(health: health, metrics: metrics)
        let receiptVerifier = ReceiptVerifier(
            configuration: ReceiptVerifierConfiguration(productionURL: configuration.appleVerifyURL, sandboxURL: configuration.appleSandboxVerifyURL,
                                                        sharedSecret: configuration.appleSharedSecret, allowSandbox: configuration.allowSandbox,
                                                        timeout: configuration.appleTimeout),
            observer: { outcome, seconds in metrics.recordAppleCall(outcome: outcome, seconds: seconds) },
            executor: WorkerPool.shared)
        let signedData = SignedDataVerifier(trustedRoots: roots, bundleID: configuration.bundleID, allowSandbox: configuration.allowSandbox,
                                            appAppleID: configuration.appleAppID)
        let apiClient = apiSettings.client(configuration, verifier: signedData, observer: { endpoint, outcome, seconds in
            metrics.recordAppleAPICall(endpoint: endpoint, outcome: outcome, seconds: seconds)
        }, executor: WorkerPool.shared)
        if let tokens = apiClient?.tokens { metrics.countTokenSignatures { tokens.signatures } }
        let records = PurchaseRecords(configuration: configuration, ledger: ledger, store: store, loops: loops, logger: logger,
                                      serverAPI: apiClient)
        metrics.addSection { records.metricsText() }
        let serverAPI = apiClient.map { ServerAPIPurchases(client: $0, validatesReceipts: apiSettings.validatesReceipts, logger: logger) }
        let apiReceipts = serverAPI?.receipts
        metrics.countWaitingForApple { receiptVerifier.waitingRequests + (apiReceipts?.waitingRequests ?? 0) }
        let purchases = PurchaseService(store: store, ledger: ledger, receipts: receiptVerifier, signedData: signedData, serverAPI: serverAPI,
                                        tokens: tokens, tokenTTL: configuration.tokenTTL, policy: configuration.accountPolicy,
                                        bundleID: configuration.bundleID, sharedSecret: configuration.appleSharedSecret,
                                        consumption: records.consumption, logger: logger)
        let notificationSync = apiClient.map {
            NotificationSync(client: $0, ledger: ledger, receiver: purchases.notificationReceiver, metrics: metrics, logger: logger)
        }
        let admin = configuration.adminToken.map {
            AdminService(adminToken: $0, publisher: Publisher(paths: paths, space: volumeSpace, versionReader: versionReader),
                         store: store, logger: logger, publishLock: SharedPublishLock(ledger: ledger))
        }
        let traffic = TrafficHistory(totals: { metrics.trafficTotals() })
        let lists = ProductListRoutes(store: store)
        let edge = EdgeRoutes(packs: packs, secret: configuration.edgeSecret, deliveries: records.deliveries)
        var routes = DepotRoutes(lists: lists, packs: packs, operations: operations, purchases: purchases, admin: admin, edge: edge)
        if let admin, let adminToken = configuration.adminToken {
            routes.console = ConsoleRoutes(admin: admin, sessions: ConsoleSessions(adminToken: adminToken), limiter: SignInLimiter())
            routes.traffic = TrafficRoutes(history: traffic, paths: paths, space: volumeSpace, reserve: { admin.publisher.reserveBytes() })
            routes.support = PurchaseSupport(ledger: ledger, store: store, logger: logger)
        }
        let table = try routes.table()
        let identifier = RequestIdentifier(trustedProxies: configuration.trustedProxies, loops: loops)
        // With an ops listener, the public port keeps the status of /healthz and nothing of /metrics or /admin/.
        let publicTable = configuration.opsListen == nil ? table : try routes.publicTable()
        let responder = DepotResponder(table: publicTable, lists: lists, identifier: identifier)
        let serverConfiguration = ServerConfiguration(
            host: configuration.host, port: configuration.port, loopCount: loops, serverName: "depot",
            headerTimeoutMilliseconds: UInt64(configuration.headerTimeout * 1000),
            idleTimeoutMilliseconds: UInt64(configuration.idleTimeout * 1000),
            writeTimeoutMilliseconds: UInt64(configuration.writeTimeout * 1000),
            bodyBudgetBytes: configuration.bodyBudget << 20, bodyMinimumBytesPerSecond: configuration.bodyMinimumRate)
        let observer = ExchangeRecorder(metrics: metrics, accessLog: configuration.accessLog.isOn ? logger : nil,
                                        deliveries: records.deliveries)
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
        var opsServer: HTTPServer?
        if let ops = configuration.opsListen {
            var opsConfiguration = serverConfiguration
            (opsConfiguration.host, opsConfiguration.port, opsConfiguration.loopCount) = (ops.host, ops.port, 1)
            let opsResponder = DepotResponder(table: try table.subset(RouteLabel.operations), lists: nil, identifier: identifier)
            do {
                opsServer = try HTTPServer(configuration: opsConfiguration, responder: opsResponder, observer: observer)
            } catch {
                server.stop()
                await server.stopped()
                await ledger.close()
                throw ConfigurationError(option: "ops-listen", "cannot listen on \(ops): \(error)")
            }
        }
        counter.server = server
        // A pack file opened off the loop is remembered by its loop, on the loop's thread.
        packs.loopJobs.bind { [weak server] loop, job in server?.onLoop(loop, job) }
        // After a swap every loop drops the files it opened from the old snapshot, busy with packs or not.
        store.onSwap { [weak server] in
            server?.onEachLoop { packs.syncCache(loop: $0) }
            records.catalogSwapped()
        }
        records.start { [weak server] job in server?.onEachLoop(job) }
        store.startWatching()
        if configuration.notificationSync > 0 { notificationSync?.start(every: configuration.notificationSync) }
        started = true
        traffic.start()
        return DepotApp(configuration: configuration, store: store, server: server, opsServer: opsServer, dataLock: dataLock,
                        metrics: metrics, ledger: ledger, records: records, logger: logger, notificationSync: notificationSync,
                        traffic: traffic)
    }

    private init(configuration: DepotConfiguration, store: CatalogStore, server: HTTPServer, opsServer: HTTPServer?,
                 dataLock: DataDirectoryLock, metrics: Metrics, ledger: Ledger?, records: PurchaseRecords?, logger: Logger,
                 notificationSync: NotificationSync?, traffic: TrafficHistory) {
        self.traffic = traffic
        self.configuration = configuration
        self.store = store
        self.server = server
        self.opsServer = opsServer
        self.dataLock = dataLock
        self.metrics = metrics
        self.ledger = ledger
        self.records = records
        self.logger = logger
        self.notificationSync = notificationSync
    }

    /// Runs one notification catch-up now (tests; the server also syncs at start and every
    /// `--notification-sync` seconds). Nil without an In-App Purchase key.
    public func syncNotifications(since: Date? = nil) async -> NotificationSyncReport? {
        await notificationSync?.syncOnce(since: since)
    }

    /// Waits until `count` catch-ups have completed since start (any outcome), or `timeout` seconds; false
    /// on timeout or without a key (tests wait for the sync at start this way).
    public func waitForNotificationSyncs(_ count: Int, timeout: Double = 60) async -> Bool {
        guard let notificationSync else { return false }
        return await notificationSync.completed.wait(for: count, timeout: timeout)
    }

    /// Stops accepting, lets in-flight requests finish (up to 10 s), then releases everything. Logs (event
    /// `shutdown`) the connections the 10 s cut off, and `stopped` last.
    public func stop() async {
        await notificationSync?.stop()
        store.stopWatching()
        traffic.stop()
        server.stop()
        opsServer?.stop()
        await server.stopped()
        await opsServer?.stopped()
        let cutOff = server.connectionsCutOffAtStop + (opsServer?.connectionsCutOffAtStop ?? 0)
        if cutOff > 0 { logger.warning(.shutdown, "drain limit reached: closed \(cutOff) connection(s) still in flight") }
        // The loops are done: what they sent goes into the delivery record before the ledger closes.
        await records?.stop()
        await ledger?.close()
        dataLock.release()
        logger.info(.shutdown, "stopped")
        logger.output.flush()
    }

    /// Reloads the catalog and content now instead of waiting for the watcher (tests).
    @discardableResult
    public func reloadCatalog() -> Bool { store.reload() == nil }

    /// Opens the ledger `--ledger` names. A failure is a configuration error naming `--ledger` (or `--data` for
    /// the default `<data>/ledger.sqlite`), on one line, without a password.
    static func openLedger(_ configuration: DepotConfiguration) async throws -> Ledger {
        let location = configuration.ledger
        do {
            return try await Ledger.open(location, dataDirectory: configuration.paths.dataDirectory, poolSize: configuration.ledgerPool)
        } catch {
            if case .sqlite(nil) = location { throw ConfigurationError(option: "data", "cannot open the ledger: \(oneLine(error))") }
            throw ConfigurationError(option: "ledger", oneLine(error))
        }
    }

    /// The download-token key: `--token-secret`; else, with a PostgreSQL ledger, the key kept in the database
    /// (the first instance creates it; replicas then accept each other's tokens); else `<data>/token.key`.
    static func tokenKey(_ configuration: DepotConfiguration, ledger: Ledger) async throws -> [UInt8] {
        if configuration.tokenSecret == nil && ledger.backend == .postgres {
            do {
                return try await ledger.tokenKey(generate: { SecureRandom.bytes(32) })
            } catch {
                throw ConfigurationError(option: "ledger", "cannot read the download-token key: \(oneLine(error))")
            }
        }
        return try TokenKey.configured(secret: configuration.tokenSecret, dataDirectory: configuration.paths.dataDirectory)
    }

    /// A message on one line (libpq's span several).
    package static func oneLine(_ error: some Error) -> String {
        "\(error)".split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

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

