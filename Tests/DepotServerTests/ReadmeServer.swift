import DepotTestSupport
import Foundation
import Testing

/// What the README's examples run against: `depot simulator` and a `depot serve` started with the options it
/// prints (as "Trying purchases without the App Store" says), on a copy of the sample catalog and content, on
/// free loopback ports.
final class ReadmeServer: Sendable {
    static let adminToken = "readme-admin-token-0123456789"
    static var depot: String { ProcessRunner.depotExecutable }

    let tree: TemporaryDirectory
    let simulator: ChildProcess
    let server: ChildProcess
    /// `http://127.0.0.1:PORT` of the simulator.
    let simulatorURL: String
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(tree: TemporaryDirectory, simulator: ChildProcess, server: ChildProcess, simulatorURL: String, port: Int) {
        self.tree = tree
        self.simulator = simulator
        self.server = server
        self.simulatorURL = simulatorURL
        self.port = port
    }

    /// Starts both in a fresh copy of the sample tree, the server with the admin API on.
    static func start() async throws -> ReadmeServer {
        let tree = try await CommandLineServeTests.sampleTree()
        let simulator = try ChildProcess(depot, ["simulator", "--port", "0"], directory: tree.path)
        let listening = await simulator.line(timeout: 60) { $0.hasPrefix("listening on http://") }
        let simulatorURL = String(try #require(listening, "the simulator: \(simulator.output.stderrText)").dropFirst("listening on ".count))
        let options = simulator.output.stdoutLines.filter { $0.hasPrefix("--") }
            .flatMap { $0.split(separator: " ", maxSplits: 1).map(String.init) }
        let server = try ChildProcess(depot, ["serve", "--port", "0", "--loops", "1", "--admin-token", adminToken] + options,
                                      directory: tree.path)
        let line = await server.line(timeout: 60) { $0.hasPrefix("listening on http://") }
        guard let port = line.flatMap({ URL(string: String($0.dropFirst("listening on ".count)))?.port }) else {
            await simulator.stop()
            await server.stop()
            throw RawHTTPConnection.Failure(description: "depot serve did not start: \(server.output.stderrText)")
        }
        return ReadmeServer(tree: tree, simulator: simulator, server: server, simulatorURL: simulatorURL, port: port)
    }

    /// A receipt (or with `transaction`, a signed transaction) from the simulator for `product`.
    func mint(_ product: String, transaction: Bool = false) async throws -> String {
        let result = try await ChildProcess.run(Self.depot, ["simulator", "receipt", "--simulator", simulatorURL, "--product", product]
                                                + (transaction ? ["--transaction"] : []), directory: tree.path)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() async {
        await server.stop()
        await simulator.stop()
    }
}
