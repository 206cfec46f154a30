import Foundation
import Synchronization
#if canImport(Glibc)
public import Glibc
#endif

/// A long-running child (a `depot serve`, an nginx) started with `posix_spawn`, its output appended to a file,
/// inheriting no other descriptor; signalled and reaped by its process ID. Waiting never blocks a thread of
/// Swift's cooperative pool: it polls with `Task.sleep`.
public final class ServerProcess: Sendable {
    /// The process ID.
    public let pid: pid_t
    private let status = Mutex<Int32?>(nil)

    /// Starts `path` with `arguments` in `directory`, stdout and stderr appended to `output`.
    public init(_ path: String, _ arguments: [String], directory: String = "/", output: String,
                environment: [String: String] = [:]) throws {
        _ = Self.exitHook
        pid = try SpawnedProcess.start(path, arguments, directory: directory, output: output, environment: environment)
        Self.started.withLock { $0.insert(pid) }
    }

    deinit {
        if exitStatus == nil { kill(pid, SIGKILL) }
        reap(blocking: exitStatus == nil)
    }

    /// The exit status once the child has exited (a signal counts as 128 + its number), reaping it; nil while it runs.
    public var exitStatus: Int32? {
        reap(blocking: false)
        return status.withLock { $0 }
    }

    /// Sends `signal` to the child (nothing once it has exited and been reaped).
    public func signal(_ number: Int32) {
        guard exitStatus == nil else { return }
        kill(pid, number)
    }

    /// Waits at most `timeout` seconds for the child to exit; returns its status, or nil if it still runs.
    @discardableResult
    public func waitForExit(timeout: Double) async -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if let status = exitStatus { return status }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return exitStatus
    }

    /// Sends `signal` and waits for the exit (at most `timeout` seconds, then SIGKILL); returns the status.
    @discardableResult
    public func stop(signal number: Int32 = SIGTERM, timeout: Double = 15) async -> Int32? {
        signal(number)
        if let status = await waitForExit(timeout: timeout) { return status }
        kill(pid, SIGKILL)
        return await waitForExit(timeout: 5)
    }

    private func reap(blocking: Bool) {
        status.withLock { status in
            guard status == nil else { return }
            var raw: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &raw, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
            guard result == pid else { return }
            // WIFEXITED / WEXITSTATUS, which Swift cannot import as macros.
            status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            Self.started.withLock { _ = $0.remove(pid) }
        }
    }

    /// The children started and not yet reaped: the test process's exit kills them (a failed test must not
    /// leave servers behind).
    private static let started = Mutex<Set<pid_t>>([])
    private static let exitHook: Void = {
        atexit {
            for pid in ServerProcess.started.withLock({ $0 }) { kill(pid, SIGKILL) }
        }
    }()
}
