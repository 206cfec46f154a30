import Platform
import DepotServer
import DepotTestSupport
import Foundation
import AppStoreSimulator
import Server

/// A Depot server running in-process on a free loopback port, over a private copy of the sample
/// `catalog/` and `content/` (or an empty tree), with its own data directory.
final class TestDepot: @unchecked Sendable {
    let tree: TemporaryDirectory
    let app: DepotApp
    let logs: LogOutput

    var baseURL: String { app.baseURL }
    var port: Int { app.address.port }
    var catalogDirectory: String { tree.path + "/catalog" }
    var contentDirectory: String { tree.path + "/content" }
    var dataDirectory: String { tree.path + "/var" }

    /// The repository root (for the sample catalog and content).
    static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Copies the sample tree (unless `sample` is false) and starts a server. `configure` may change any option.
    static func start(sample: Bool = true, tree existing: TemporaryDirectory? = nil,
                      volumeSpace: any VolumeSpace = SystemVolumeSpace(),
                      versionReader: Publisher.VersionReader = .system,
                      packFileOpener: PackFileOpener = .system,
                      configure: (inout DepotConfiguration) -> Void = { _ in }) async throws -> TestDepot {
        let tree = existing ?? TemporaryDirectory("depot-server")
        if existing == nil {
            if sample {
                try await copySample(into: tree.path)
            } else {
                try FileManager.default.createDirectory(atPath: tree.path + "/catalog", withIntermediateDirectories: true)
                try FileManager.default.createDirectory(atPath: tree.path + "/content", withIntermediateDirectories: true)
                tree.write("catalog/products.json", "{\"products\": []}\n")
            }
        }
        var configuration = DepotConfiguration()
        configuration.port = 0
        configuration.paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content",
                                         dataDirectory: tree.path + "/var")
        configuration.tokenSecret = "test-secret-test-secret-test-secret-0123"
        configuration.loops = 2
        configure(&configuration)
        let logs = LogOutput(capturing: true)
        let app = try await DepotApp.start(configuration, logger: Logger(output: logs), volumeSpace: volumeSpace,
                                           versionReader: versionReader, packFileOpener: packFileOpener)
        return TestDepot(tree: tree, app: app, logs: logs)
    }

    /// Copies the repository's sample `catalog/` and `content/` (mtimes kept, so validators match the record).
    static func copySample(into path: String) throws {
        for name in ["catalog", "content"] {
            let result = try ProcessRunner.run("/bin/cp", ["-a", repositoryRoot + "/" + name, path + "/" + name])
            guard result.status == 0 else { throw RawHTTPConnection.Failure(description: "cp failed: \(result.stderr)") }
        }
        try? FileManager.default.removeItem(atPath: path + "/content/.staging")
    }

    /// ``copySample(into:)`` with its `cp` children waited for on a thread of their own (async callers).
    static func copySample(into path: String) async throws {
        try await OffPool.run { try copySample(into: path) }
    }

    private init(tree: TemporaryDirectory, app: DepotApp, logs: LogOutput) {
        self.tree = tree
        self.app = app
        self.logs = logs
    }

    func stop() async { await app.stop() }

    /// A new raw connection to the server.
    func connect() throws -> RawHTTPConnection { try RawHTTPConnection(port: port) }

    /// Sends one request on a fresh connection and reads the response.
    func request(_ raw: String, isHead: Bool = false, timeout: Double = 30) throws -> RawResponse {
        let connection = try connect()
        connection.send(raw)
        return try connection.readResponse(timeout: timeout, isHead: isHead)
    }

    /// `GET path` with extra header lines.
    func get(_ path: String, _ headers: [String: String] = [:], method: String = "GET") throws -> RawResponse {
        var raw = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { raw += "\(name): \(value)\r\n" }
        raw += "\r\n"
        return try request(raw, isHead: method == "HEAD")
    }
}
