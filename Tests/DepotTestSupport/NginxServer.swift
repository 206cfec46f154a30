import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private nginx for tests, run with a configuration the test got from `depot edge-config nginx`, in the
/// foreground (`-g 'daemon off;'`), stopped by PID. Its error log goes to `directory/nginx.log`.
///
/// When nginx (or a build of it with the modules the edge needs: auth_request, slice, ssl, http_v2) is missing
/// and the tests run as root, Debian's `nginx` package is installed with `apt-get`, as `.ci/run` does.
public final class NginxServer: Sendable {
    /// The configuration file.
    public let configurationPath: String
    /// nginx's stderr (its error log).
    public let logPath: String
    /// The master process.
    public let process: ServerProcess

    private init(configurationPath: String, logPath: String, process: ServerProcess) {
        self.configurationPath = configurationPath
        self.logPath = logPath
        self.process = process
    }

    /// The modules the edge configuration uses.
    public static let requiredModules = ["http_auth_request_module", "http_slice_module", "http_ssl_module", "http_v2_module"]

    /// Writes `configuration` into `directory`, checks it with `nginx -t`, starts nginx, and returns once it accepts
    /// connections on `port` (127.0.0.1).
    public static func start(configuration: String, directory: String, port: Int) async throws -> NginxServer {
        let binary = try await Self.binary()
        let configurationPath = directory + "/nginx.conf"
        let logPath = directory + "/nginx.log"
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: configurationPath))
        let check = try await Self.blocking { try SpawnedProcess.run(binary, ["-t", "-q", "-c", configurationPath]) }
        guard check.status == 0 else { throw Failure("nginx -t refused the configuration: \(check.output)") }
        let process = try ServerProcess(binary, ["-c", configurationPath, "-g", "daemon off;"], directory: directory, output: logPath)
        let server = NginxServer(configurationPath: configurationPath, logPath: logPath, process: process)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let status = process.exitStatus {
                throw Failure("nginx exited with \(status): \(server.log.suffix(2_000))")
            }
            if Self.accepts(port: port) { return server }
            try await Task.sleep(for: .milliseconds(20))
        }
        await server.stop()
        throw Failure("nginx did not listen on port \(port) within 20 s: \(server.log.suffix(2_000))")
    }

    /// What nginx wrote to its error log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Stops nginx (SIGTERM: a fast shutdown) and waits for the master to exit.
    public func stop() async {
        await process.stop(signal: SIGTERM, timeout: 10)
    }

    /// The nginx binary, installing Debian's `nginx` when it (or a module the edge needs) is missing and the process
    /// runs as root.
    public static func binary() async throws -> String {
        try await blocking {
            let path = "/usr/sbin/nginx"
            if hasModules(path) { return path }
            guard getuid() == 0 else {
                throw Failure("nginx with \(requiredModules.joined(separator: ", ")) is not installed (apt-get install nginx)")
            }
            let install = try SpawnedProcess.run("/bin/sh", ["-c",
                "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx"])
            guard install.status == 0, hasModules(path) else { throw Failure("installing nginx failed: \(install.output)") }
            return path
        }
    }

    /// Whether `path` is an nginx built with every module the edge needs (`nginx -V`).
    private static func hasModules(_ path: String) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: path), let version = try? SpawnedProcess.run(path, ["-V"]),
              version.status == 0 else { return false }
        return requiredModules.allSatisfy { version.output.contains("--with-\($0)") }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago.
    public static func freePort() throws -> Int { try LoopbackPort.free() }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs blocking work (child processes) on a thread of its own, off Swift's cooperative pool.
    private static func blocking<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }.start()
        }
    }
}
