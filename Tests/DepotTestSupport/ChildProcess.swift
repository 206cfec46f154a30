public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process whose output is read on threads of its own, with waits that suspend instead of blocking: for
/// tests that run `depot` (or anything else) without holding a thread of Swift's cooperative pool.
public final class ChildProcess: Sendable {
    /// What the child wrote so far, and how it ended.
    public struct Output: Sendable {
        public var stdout: [UInt8] = []
        public var stderr: [UInt8] = []
        /// The exit status (128 + the signal for a child killed by one); nil while it runs.
        public var status: Int32?
        var stdoutClosed = false
        var stderrClosed = false

        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
        /// Every complete line of stdout.
        public var stdoutLines: [String] {
            stdoutText.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
        /// The child exited and both pipes reached their end.
        public var isFinished: Bool { status != nil && stdoutClosed && stderrClosed }
    }

    private struct Waiter {
        let check: @Sendable (Output) -> Bool
        let continuation: CheckedContinuation<Output?, Never>
    }

    /// The output and the waiters, shared with the reader threads and the termination handler.
    private final class Shared: Sendable {
        let lock = Mutex<(output: Output, waiters: [Int: Waiter], next: Int)>((Output(), [:], 0))

        /// Changes the output and resumes every waiter whose condition now holds.
        func update(_ change: (inout Output) -> Void) {
            let ready: [(CheckedContinuation<Output?, Never>, Output)] = lock.withLock { s in
                change(&s.output)
                var ready: [(CheckedContinuation<Output?, Never>, Output)] = []
                for (key, waiter) in s.waiters where waiter.check(s.output) {
                    s.waiters.removeValue(forKey: key)
                    ready.append((waiter.continuation, s.output))
                }
                return ready
            }
            for (continuation, output) in ready { continuation.resume(returning: output) }
        }
    }

    private let child: SpawnedChild
    private let state = Shared()

    /// The child's process ID.
    public var pid: Int32 { child.pid }

    /// Starts `executable` (with `posix_spawn`, see ``SpawnedChild``); `environment` entries are added to this
    /// process's environment. `standardOutput` (a terminal's slave side, say) replaces the captured stdout pipe;
    /// stdin is empty unless `input` is given.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
                input: Data? = nil, standardOutput: FileHandle? = nil) throws {
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        child = try SpawnedChild.start(executable, arguments, environment: env, currentDirectory: directory,
                                       standardOutput: standardOutput?.fileDescriptor)
        let (child, state) = (child, state)
        let waiter = Thread {
            let status = child.waitForShellStatus()
            state.update { $0.status = status }
        }
        waiter.name = "child-exit"
        waiter.start()
        if let input { child.input.write(input) }
        try? child.input.close()
        if standardOutput == nil {
            Self.drain(child.output, into: state, stdout: true)
        } else {
            try? child.output.close()
            state.update { $0.stdoutClosed = true }
        }
        Self.drain(child.errorOutput, into: state, stdout: false)
    }

    /// Runs a program to its end (killed after `timeout` seconds) and returns what it wrote.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           directory: String? = nil, input: Data? = nil, timeout: Double = 120) async throws -> ProcessResult {
        let child = try ChildProcess(executable, arguments, environment: environment, directory: directory, input: input)
        let output = await child.finish(timeout: timeout)
        return ProcessResult(status: output.status ?? -1, stdout: output.stdoutText, stderr: output.stderrText)
    }

    /// What the child wrote so far.
    public var output: Output { state.lock.withLock { $0.output } }

    /// Waits until `condition` holds for the output (or `timeout` seconds pass: nil).
    public func wait(timeout: Double, until condition: @escaping @Sendable (Output) -> Bool) async -> Output? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Output?, Never>) in
            let (ready, key): (Output?, Int) = state.lock.withLock { s in
                if condition(s.output) { return (s.output, -1) }
                s.next += 1
                s.waiters[s.next] = Waiter(check: condition, continuation: continuation)
                return (nil, s.next)
            }
            if let ready { continuation.resume(returning: ready); return }
            Task { [state] in
                try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                let waiter = state.lock.withLock { $0.waiters.removeValue(forKey: key) }
                waiter?.continuation.resume(returning: nil)
            }
        }
    }

    /// The first stdout line that satisfies `predicate`, waiting at most `timeout` seconds.
    public func line(timeout: Double, where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        await wait(timeout: timeout) { $0.stdoutLines.contains(where: predicate) || $0.stdoutClosed }?.stdoutLines.first(where: predicate)
    }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits for the child to exit and its output to end; kills it (SIGKILL) after `timeout` seconds.
    @discardableResult
    public func finish(timeout: Double) async -> Output {
        if let done = await wait(timeout: timeout, until: \.isFinished) { return done }
        send(SIGKILL)
        return await wait(timeout: 10, until: \.isFinished) ?? output
    }

    /// Sends `signal`, then waits as ``finish(timeout:)`` does.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, timeout: Double = 15) async -> Output {
        send(signal)
        return await finish(timeout: timeout)
    }

    private static func drain(_ handle: FileHandle, into state: Shared, stdout: Bool) {
        let fd = handle.fileDescriptor
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                let piece = Array(buffer[0..<n])
                state.update { if stdout { $0.stdout += piece } else { $0.stderr += piece } }
            }
            state.update { if stdout { $0.stdoutClosed = true } else { $0.stderrClosed = true } }
            try? handle.close()
        }
        thread.name = "child-output"
        thread.start()
    }
}
