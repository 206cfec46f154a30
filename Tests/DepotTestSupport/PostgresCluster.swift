import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL server for tests: `initdb` into a temporary directory, `postgres` on a free loopback
/// port and on a Unix socket in that directory, run as the unprivileged `postgres` user when the tests run
/// as root (PostgreSQL refuses root). Stopped by PID when the test process exits (and by a watchdog if the
/// process dies without exiting). A fresh database per test is cheap (`createDatabase()`).
///
/// When the binaries are missing and the process runs as root, Debian's `postgresql` package is installed
/// with `apt-get`, as `.ci/run` does; tests never skip for want of it.
///
/// Logins: over the Unix socket without a password (`trust`), over TCP with `user`/`password`
/// (`scram-sha-256`), so tests can try a wrong password.
public final class PostgresCluster: Sendable {
    /// How `stop(mode:)` shuts the server down (`pg_ctl stop -m ...`).
    public enum StopMode: String, Sendable {
        /// Roll back sessions and shut down cleanly.
        case fast
        /// Kill every server process at once, as a crash does; the next start runs crash recovery.
        case immediate
    }

    /// The superuser the tests log in as.
    public let user = "depot"
    /// Its password (TCP logins).
    public let password: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The temporary directory: data, log, and the Unix socket.
    public let directory: String
    private let binaries: String
    private let owner: String?

    /// The cluster every test of this process shares, started on first use. It runs with `fsync = off`:
    /// creating and dropping a database per test then costs a tenth as much on a loaded machine, and nothing
    /// here survives the process anyway (the durability tests start their own cluster with `start()`).
    public static func shared() async throws -> PostgresCluster {
        let task = sharedStart.withLock { task in
            if let task { return task }
            let started = Task { try await PostgresCluster.start(durable: false) }
            task = started
            return started
        }
        return try await task.value
    }

    /// Starts a new private cluster (for tests that stop and restart the server). `durable` keeps PostgreSQL's
    /// defaults (`fsync = on`), so an acknowledged commit is on disk.
    public static func start(durable: Bool = true) async throws -> PostgresCluster {
        try await blocking { try PostgresCluster(durable: durable) }
    }

    private init(durable: Bool) throws {
        binaries = try Self.locateBinaries()
        owner = getuid() == 0 ? Self.unprivilegedUser() : nil
        password = "depot-test-" + UUID().uuidString.prefix(8).lowercased()
        directory = "/tmp/depot-pg-" + UUID().uuidString.prefix(8).lowercased()
        port = try LoopbackPort.free()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/password"))
        if let owner {
            try FileManager.default.setAttributes([.ownerAccountName: owner], ofItemAtPath: directory)
            try FileManager.default.setAttributes([.ownerAccountName: owner], ofItemAtPath: directory + "/password")
        }
        try run("initdb", ["-D", directory + "/data", "-U", user, "--pwfile=" + directory + "/password",
                           "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8",
                           "--no-sync", "--no-instructions"])
        let settings = """

            port = \(port)
            listen_addresses = '127.0.0.1'
            unix_socket_directories = '\(directory)'
            max_connections = 400
            log_min_messages = warning
            log_connections = off
            fsync = \(durable ? "on" : "off")
            full_page_writes = \(durable ? "on" : "off")

            """
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/data/postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(settings.utf8))
        try handle.close()
        try startServer()
        Self.registerForExit(directory: directory)
        try startWatchdog()
    }

    /// `postgres://depot:PASSWORD@127.0.0.1:PORT/DATABASE` (TCP, with the password, or `password` instead).
    public func uri(database: String, password: String? = nil) -> String {
        "postgres://\(user):\(password ?? self.password)@127.0.0.1:\(port)/\(database)"
    }

    /// `postgres://depot@/DATABASE?host=DIRECTORY&port=PORT` (the Unix socket, no password).
    public func socketURI(database: String) -> String {
        "postgres://\(user)@/\(database)?host=\(directory)&port=\(port)"
    }

    /// Creates a database with a fresh name and returns the name.
    public func createDatabase() async throws -> String {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        _ = try await sql("CREATE DATABASE \(name)")
        return name
    }

    /// Drops a database, disconnecting its sessions.
    public func dropDatabase(_ name: String) async throws {
        _ = try await sql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs SQL through `psql` over the Unix socket and returns its unaligned output.
    public func sql(_ statement: String, database: String = "postgres") async throws -> String {
        let (binaries, directory, port, user) = (binaries, directory, port, user)
        return try await Self.blocking {
            let result = try SpawnedProcess.run(binaries + "/psql", [
                "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", String(port), "-U", user,
                "-d", database, "-c", statement,
            ])
            guard result.status == 0 else { throw Failure("psql failed: \(result.output)") }
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The server's process ID, while it runs.
    public var pid: Int32? {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
              let line = text.split(separator: "\n").first, let pid = Int32(line) else { return nil }
        return kill(pid, 0) == 0 ? pid : nil
    }

    /// Stops the server (`pg_ctl stop -m fast|immediate`, waiting until it is gone).
    public func stop(mode: StopMode = .fast) async throws {
        try await Self.blocking { try self.run("pg_ctl", ["-D", self.directory + "/data", "-m", mode.rawValue, "-w", "stop"]) }
    }

    /// Starts the server again after `stop(mode:)` (crash recovery runs after an immediate stop).
    public func restart() async throws {
        try await Self.blocking { try self.startServer() }
    }

    /// Stops the server at once and removes its directory (a private cluster at the end of its test).
    public func destroy() async throws {
        if pid != nil { try await stop(mode: .immediate) }
        try? FileManager.default.removeItem(atPath: directory)
        Self.running.withLock { $0.removeAll { $0 == self.directory } }
    }

    // MARK: - Private

    private static let sharedStart = Mutex<Task<PostgresCluster, any Error>?>(nil)
    private static let running = Mutex<[String]>([])

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    private func startServer() throws {
        try run("pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60", "start"])
    }

    /// Runs one of the PostgreSQL programs, as the unprivileged owner when the tests run as root.
    private func run(_ program: String, _ arguments: [String]) throws {
        let path = binaries + "/" + program
        let result: (status: Int32, output: String)
        if let owner {
            guard let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            }) else { throw Failure("runuser (util-linux) is needed to run PostgreSQL as \(owner)") }
            result = try SpawnedProcess.run(runuser, ["-u", owner, "--", path] + arguments, directory: directory)
        } else {
            result = try SpawnedProcess.run(path, arguments, directory: directory)
        }
        guard result.status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
            throw Failure("\(program) failed (\(result.status)): \(result.output) \(log.suffix(2_000))")
        }
    }

    /// Stops the server if this process dies without running its exit handlers.
    private func startWatchdog() throws {
        let pidFile = directory + "/data/postmaster.pid"
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            if [ -f '\(pidFile)' ]; then kill -QUIT "$(head -n 1 '\(pidFile)')" 2>/dev/null; sleep 1; fi
            rm -rf '\(directory)'
            """
        try SpawnedProcess.launch("/bin/sh", ["-c", script])
    }

    /// At exit: every cluster still running is stopped by PID (immediate: nothing in it is kept) and removed.
    private static func registerForExit(directory: String) {
        let first = running.withLock { running in
            running.append(directory)
            return running.count == 1
        }
        guard first else { return }
        atexit {
            for directory in PostgresCluster.running.withLock({ $0 }) {
                let pidFile = directory + "/data/postmaster.pid"
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                   let line = text.split(separator: "\n").first, let pid = Int32(line), kill(pid, SIGQUIT) == 0 {
                    for _ in 0..<500 where kill(pid, 0) == 0 { usleep(10_000) }
                }
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }

    /// The newest `/usr/lib/postgresql/N/bin`, installing Debian's package first when it is missing.
    private static func locateBinaries() throws -> String {
        if let found = installedBinaries() { return found }
        guard getuid() == 0 else {
            throw Failure("PostgreSQL is not installed (apt-get install postgresql); the tests need its initdb and pg_ctl")
        }
        let install = try SpawnedProcess.run("/bin/sh", ["-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql"])
        guard install.status == 0, let found = installedBinaries() else {
            throw Failure("installing postgresql failed: \(install.output)")
        }
        return found
    }

    private static func installedBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { Int($0) }.sorted(by: >)
        return versions.map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    private static func unprivilegedUser() -> String {
        getpwnam("postgres") != nil ? "postgres" : "nobody"
    }

    /// Runs blocking work (processes) on a thread of its own: not on Swift's cooperative pool, and not on
    /// Dispatch's global queues, whose few threads the code under test needs.
    private static func blocking<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }.start()
        }
    }
}
