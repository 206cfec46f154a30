import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Several `depot serve` processes (the real binary) on one PostgreSQL database and one catalog/content tree
/// (scale-out §1–§4), optionally behind the nginx configuration `depot edge-config nginx` prints (§6). No
/// `--token-secret`: the instances share the token key the database holds. Purchases are StoreKit 2
/// transactions signed by a run-time test PKI the instances trust; the admin API is on.
final class ScaleOutCluster: Sendable {
    static let edgeSecret = "edge-secret-0123456789abcdef-0123456789"
    static let adminToken = "admin-token-0123456789"

    let tree: TemporaryDirectory
    let postgres: PostgresCluster
    let database: String
    let pki: TestPKI
    let signer: TransactionSigner
    let instances: [DepotInstance]
    let edge: NginxServer?
    /// The edge's port (0 without an edge).
    let edgePort: Int

    private init(tree: TemporaryDirectory, postgres: PostgresCluster, database: String, pki: TestPKI, instances: [DepotInstance],
                 edge: NginxServer?, edgePort: Int) {
        self.tree = tree
        self.postgres = postgres
        self.database = database
        self.pki = pki
        signer = TransactionSigner(pki: pki)
        self.instances = instances
        self.edge = edge
        self.edgePort = edgePort
    }

    /// `--ledger` of the instances: TCP with the password (which must never be printed).
    var ledgerURI: String { postgres.uri(database: database) }

    /// Starts `count` instances on a fresh database of `postgres` (the process's shared cluster by default) and
    /// the sample tree, after `prepare(treePath)` (e.g. a `depot publish` of a bigger pack); with `edge`, nginx in
    /// front of them with the printed configuration (`edgeArguments` added to `depot edge-config nginx`'s).
    static func start(instances count: Int = 3, postgres given: PostgresCluster? = nil, edge withEdge: Bool = false,
                      edgeArguments: [String] = [], extraArguments: [String] = [], prepare: @escaping @Sendable (String) throws -> Void = { _ in }) async throws -> ScaleOutCluster {
        let postgres: PostgresCluster
        if let given { postgres = given } else { postgres = try await PostgresCluster.shared() }
        let database = try await postgres.createDatabase()
        let tree = TemporaryDirectory("depot-scaleout")
        let treePath = tree.path
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-365 * 86_400), validUntil: now.addingTimeInterval(365 * 86_400))
        tree.write("root.pem", pki.rootPEM)
        try await OffPool.run {
            try TestDepot.copySample(into: treePath)
            try prepare(treePath)
        }
        let arguments = [
            "--host", "127.0.0.1", "--loops", "1", "--catalog", treePath + "/catalog", "--content", treePath + "/content",
            "--ledger", postgres.uri(database: database), "--ledger-pool", "4", "--apple-root-certs", treePath + "/root.pem",
            "--access-log", "off", "--edge-secret", edgeSecret, "--admin-token", adminToken,
        ] + extraArguments
        var instances: [DepotInstance] = []
        do {
            // One at a time: the first creates the schema and the token key, the others find them.
            for index in 0..<count {
                let name = "instance-\(index)"
                instances.append(try await DepotInstance.start(name, arguments: arguments + ["--data", treePath + "/" + name],
                                                               directory: treePath))
            }
        } catch {
            for instance in instances { await instance.kill() }
            throw error
        }
        var edge: NginxServer?
        var edgePort = 0
        if withEdge {
            do {
                edgePort = try NginxServer.freePort()
                let configuration = try await edgeConfiguration(["--upstream", instances.map { "127.0.0.1:\($0.port)" }.joined(separator: ","),
                                                                 "--listen", "127.0.0.1:\(edgePort)"] + edgeArguments, tree: tree)
                edge = try await NginxServer.start(configuration: configuration, directory: treePath + "/edge", port: edgePort)
            } catch {
                for instance in instances { await instance.kill() }
                throw error
            }
        }
        return ScaleOutCluster(tree: tree, postgres: postgres, database: database, pki: pki, instances: instances, edge: edge,
                               edgePort: edgePort)
    }

    /// Starts a cluster, runs `body`, and stops everything whatever `body` does.
    static func run(instances count: Int = 3, postgres: PostgresCluster? = nil, edge: Bool = false, edgeArguments: [String] = [],
                    extraArguments: [String] = [], prepare: @escaping @Sendable (String) throws -> Void = { _ in },
                    _ body: (ScaleOutCluster) async throws -> Void) async throws {
        let cluster = try await start(instances: count, postgres: postgres, edge: edge, edgeArguments: edgeArguments,
                                      extraArguments: extraArguments, prepare: prepare)
        do {
            try await body(cluster)
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    /// `depot edge-config nginx ARGUMENTS --edge-secret … --cache-dir <tree>/edge/cache`, as printed.
    static func edgeConfiguration(_ arguments: [String], tree: TemporaryDirectory) async throws -> String {
        let cache = tree.path + "/edge/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let result = try await OffPool.run {
            try SpawnedProcess.run(ProcessRunner.depotExecutable,
                                   ["edge-config", "nginx", "--edge-secret", edgeSecret, "--cache-dir", cache] + arguments)
        }
        guard result.status == 0 else { throw RawHTTPConnection.Failure(description: "edge-config failed: \(result.output)") }
        return result.output
    }

    func stop() async {
        await edge?.stop()
        for instance in instances { await instance.stop() }
        try? await postgres.dropDatabase(database)
    }

    // MARK: - Requests

    /// One request on a fresh connection to 127.0.0.1:`port`, off the cooperative pool.
    static func request(_ port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [],
                        timeout: Double = 20) async throws -> RawResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(bytes)
            return try connection.readResponse(timeout: timeout, isHead: method == "HEAD")
        }
    }

    /// `GET path` with the token as `Authorization: Bearer` when given.
    static func get(_ port: Int, _ path: String, token: String? = nil, headers: [String: String] = [:]) async throws -> RawResponse {
        var fields = headers
        if let token { fields["Authorization"] = "Bearer \(token)" }
        return try await request(port, "GET", path, headers: fields)
    }

    /// `POST path` with a JSON body.
    static func post(_ port: Int, _ path: String, json object: [String: Any]) async throws -> RawResponse {
        try await request(port, "POST", path, headers: ["Content-Type": "application/json"], body: PurchaseFixture.jsonBytes(object))
    }

    /// A fresh StoreKit 2 purchase of level 2, signed for the instances.
    func transaction(id: String = PurchaseFixture.transactionID()) -> TransactionSigner.Transaction {
        PurchaseFixture.transaction(PurchaseFixture.level2, id: id)
    }

    /// `POST /v1/receipts` with `transaction` (and `account`) through `port`.
    func purchase(_ transaction: TransactionSigner.Transaction, account: String? = nil, through port: Int) async throws -> RawResponse {
        var object: [String: Any] = ["transactions": [try signer.signedTransaction(transaction)]]
        object["account"] = account
        return try await Self.post(port, WirePath.receipts.pattern, json: object)
    }

    /// A signed V2 notification of `type` about `transaction` (a REFUND carries its revocation date).
    func notification(_ type: TransactionSigner.NotificationType, about transaction: TransactionSigner.Transaction,
                      uuid: String = UUID().uuidString.lowercased()) throws -> [String: Any] {
        let subject = type == .refund || type == .revoke ? NotificationAppStoreTests.revoked(transaction) : transaction
        return ["signedPayload": try signer.signedNotification(type, notificationUUID: uuid, transaction: subject, signedDate: Date())]
    }

    /// The status a pack file request with `token` gets from `port` (`200` when honoured).
    static func fileStatus(_ port: Int, token: String, path: String = WirePath.packFile(pack: "level2", version: 1, path: "stages.bin"))
        async throws -> RawResponse {
        try await get(port, path, token: token)
    }

    /// The samples of `/metrics` on `port`, by series.
    static func metrics(_ port: Int) async throws -> [String: Double] {
        let response = try await get(port, WirePath.metrics.pattern)
        var samples: [String: Double] = [:]
        for line in response.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
