import Foundation
#if canImport(Glibc)
public import Glibc
#endif

/// Runs programs with `posix_spawn` and `waitpid`, output captured through a file and no other descriptor
/// inherited: for programs that leave daemons behind (`pg_ctl start`), which must not keep the pipes of
/// other tests' processes open.
public enum SpawnedProcess {
    /// A program that could not be started.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `path` with `arguments` in `directory` and waits; returns the exit status and what it wrote to
    /// stdout and stderr together. Stdin is `/dev/null`.
    public static func run(_ path: String, _ arguments: [String], directory: String = "/") throws -> (status: Int32, output: String) {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString).out").path
        defer { unlink(outputPath) }
        let pid = try spawn(path, arguments, directory: directory, output: outputPath)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure(description: "waitpid failed: errno \(errno)") }
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // WIFEXITED / WEXITSTATUS, which Swift cannot import as macros.
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output)
    }

    /// Starts `path` with `arguments` and returns at once (its output is discarded).
    @discardableResult
    public static func launch(_ path: String, _ arguments: [String]) throws -> pid_t {
        try spawn(path, arguments, directory: "/", output: "/dev/null")
    }

    /// Starts `path` with `arguments` in `directory`, its stdout and stderr appended to the file `output` (so a
    /// restarted server's log continues), with
    /// `environment` added to this process's, and returns its process ID at once (reap it with `waitpid`).
    public static func start(_ path: String, _ arguments: [String], directory: String = "/", output: String,
                             environment: [String: String] = [:]) throws -> pid_t {
        try spawn(path, arguments, directory: directory, output: output, appending: true, environment: environment)
    }

    private static func spawn(_ path: String, _ arguments: [String], directory: String, output: String, appending: Bool = false,
                              environment: [String: String] = [:]) throws -> pid_t {
        // `cd` through the shell: posix_spawn has no portable chdir action.
        let argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory, path] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | (appending ? O_APPEND : O_TRUNC), 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else is inherited: a daemon it leaves behind (the postmaster) must not hold another
        // child's pipe open, or whoever reads that pipe never sees its end. (glibc ignores a close action
        // for a descriptor that was closed meanwhile.)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let rc: Int32
        if environment.isEmpty {
            rc = posix_spawn(&pid, "/bin/sh", &actions, nil, cArguments, environ)
        } else {
            var merged = ProcessInfo.processInfo.environment
            for (name, value) in environment { merged[name] = value }
            let cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { cEnvironment.forEach { free($0) } }
            rc = posix_spawn(&pid, "/bin/sh", &actions, nil, cArguments, cEnvironment)
        }
        guard rc == 0 else { throw Failure(description: "cannot start \(path): \(String(cString: strerror(rc)))") }
        return pid
    }
}
