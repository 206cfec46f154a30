import DepotTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One `depot serve` child process (the real binary), its stdout and stderr appended to a log file. Started on
/// a free port (`--port 0`) and found through its `listening on http://HOST:PORT` line; restarted on the same
/// port after a kill.
final class DepotInstance: Sendable {
    let name: String
    let arguments: [String]
    let directory: String
    let logPath: String
    let environment: [String: String]
    private let state: Mutex<(process: ServerProcess?, port: Int)>

    private init(name: String, arguments: [String], directory: String, logPath: String, environment: [String: String]) {
        self.name = name
        self.arguments = arguments
        self.directory = directory
        self.logPath = logPath
        self.environment = environment
        state = Mutex((nil, 0))
    }

    /// Starts `depot serve ARGUMENTS --port 0` in `directory` and waits for it to listen.
    static func start(_ name: String, arguments: [String], directory: String, environment: [String: String] = [:]) async throws -> DepotInstance {
        let instance = DepotInstance(name: name, arguments: arguments, directory: directory, logPath: directory + "/\(name).log",
                                     environment: environment)
        try await instance.launch(port: 0)
        return instance
    }

    /// The port it listens on.
    var port: Int { state.withLock { $0.port } }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The process running now (nil after `kill()` or `stop()`).
    var process: ServerProcess? { state.withLock { $0.process } }

    /// Everything it logged so far (all its runs).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL, as a crash does, and reap.
    func kill() async {
        guard let process = state.withLock({ state -> ServerProcess? in
            defer { state.process = nil }
            return state.process
        }) else { return }
        await process.stop(signal: SIGKILL, timeout: 10)
    }

    /// SIGTERM (graceful stop); returns the exit status.
    @discardableResult
    func stop() async -> Int32? {
        guard let process = state.withLock({ state -> ServerProcess? in
            defer { state.process = nil }
            return state.process
        }) else { return nil }
        return await process.stop(signal: SIGTERM, timeout: 20)
    }

    /// Starts it again on the port it had.
    func restart() async throws {
        try await launch(port: port)
    }

    private func launch(port: Int) async throws {
        let offset = (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? NSNumber)?.intValue ?? 0
        let process = try ServerProcess(ProcessRunner.depotExecutable, ["serve"] + arguments + ["--port", String(port)],
                                       directory: directory, output: logPath, environment: environment)
        state.withLock { $0.process = process }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let found = listeningPort(after: offset) {
                state.withLock { $0.port = found }
                return
            }
            if let status = process.exitStatus {
                state.withLock { $0.process = nil }
                throw RawHTTPConnection.Failure(description: "\(name) exited with \(status): \(log.suffix(2_000))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        await process.stop(signal: SIGKILL)
        throw RawHTTPConnection.Failure(description: "\(name) did not listen within 60 s: \(log.suffix(2_000))")
    }

    /// The port of the first `listening on http://HOST:PORT` line written after `offset` bytes of the log.
    private func listeningPort(after offset: Int) -> Int? {
        guard let data = FileManager.default.contents(atPath: logPath), data.count > offset else { return nil }
        let text = String(decoding: data[offset...], as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }) else { return nil }
        return line.split(separator: ":").last.flatMap { Int($0) }
    }
}
