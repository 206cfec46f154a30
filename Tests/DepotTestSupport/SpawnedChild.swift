public import Foundation
#if canImport(Glibc)
public import Glibc
#endif

/// A child process started with `posix_spawn`, its stdin, stdout and stderr on pipes of its own, and no
/// other descriptor of the test process inherited.
///
/// Test support uses this instead of Foundation's `Process`, whose `run()` on Linux (Swift 6.3.1) reads
/// `/proc/self/fd` entries past their end and now and then crashes the whole test process with SIGSEGV
/// (swift-corelibs-foundation PR #5472). Closing every other descriptor in the child also keeps a pipe of
/// one test's child from being held open by another test's child, which made readers wait forever.
public final class SpawnedChild: @unchecked Sendable {
    /// A program that could not be started.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The write end of the child's stdin (close it to send end-of-file).
    public let input: FileHandle
    /// The read end of the child's stdout.
    public let output: FileHandle
    /// The read end of the child's stderr.
    public let errorOutput: FileHandle

    private let lock = NSLock()
    private var reaped: (code: Int32, signaled: Bool)?

    private init(pid: pid_t, input: FileHandle, output: FileHandle, errorOutput: FileHandle) {
        self.pid = pid
        self.input = input
        self.output = output
        self.errorOutput = errorOutput
    }

    /// Starts `executable` with `arguments`; `environment` is the child's whole environment (the test
    /// process's own when nil), `currentDirectory` its working directory.
    ///
    /// `standardOutput` (a terminal's slave side, say) becomes the child's stdout instead of a pipe; ``output``
    /// then reads a pipe nobody writes to, which ends at once.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                             currentDirectory: String? = nil, standardOutput: Int32? = nil) throws -> SpawnedChild {
        let stdin = try pipePair(), stdout = try pipePair(), stderr = try pipePair()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The pipes are close-on-exec in the parent; dup2 clears that flag on the child's 0, 1 and 2.
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput ?? stdout.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
        guard let closeFrom = GNUSpawnActions.closeFrom, let changeDirectory = GNUSpawnActions.changeDirectory else {
            throw Failure(description: "this C library lacks posix_spawn_file_actions_addclosefrom_np/addchdir_np")
        }
        _ = closeFrom(&actions, 3)
        if let currentDirectory { _ = changeDirectory(&actions, currentDirectory) }

        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        let cEnvironment = variables.map { strdup($0) } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, cArguments, cEnvironment)
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        guard rc == 0 else {
            close(stdin.write)
            close(stdout.read)
            close(stderr.read)
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        return SpawnedChild(pid: pid, input: FileHandle(fileDescriptor: stdin.write, closeOnDealloc: true),
                            output: FileHandle(fileDescriptor: stdout.read, closeOnDealloc: true),
                            errorOutput: FileHandle(fileDescriptor: stderr.read, closeOnDealloc: true))
    }

    /// Sends `signal` to the child (a no-op once it was reaped).
    public func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if reaped == nil { kill(pid, signal) }
    }

    /// Blocks the calling thread until the child exits; its exit status, or the number of the signal that
    /// ended it (as Foundation's `terminationStatus` reports it).
    @discardableResult
    public func waitForExit() -> Int32 {
        reap(blocking: true)?.code ?? 0
    }

    /// Blocks until the child exits; its status as a shell reports it: the exit status, or 128 plus the number
    /// of the signal that ended it.
    public func waitForShellStatus() -> Int32 {
        guard let (code, signaled) = reap(blocking: true) else { return 0 }
        return signaled ? 128 + code : code
    }

    /// Whether a signal ended the child (false while it runs or when it exited by itself).
    public var endedBySignal: Bool { recorded()?.signaled ?? false }

    /// Waits at most `timeout` seconds for the child to exit (polling the calling thread); its status as
    /// `waitForExit()` gives it, or nil if it still runs then.
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let (code, _) = reap(blocking: false) { return code }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    private func reap(blocking: Bool) -> (code: Int32, signaled: Bool)? {
        if let known = recorded() { return known }
        // waitpid runs without the lock, so `send` works while another thread waits for the exit.
        var status: Int32 = 0
        while true {
            let rc = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if rc == pid { break }
            if rc == 0 { return nil }
            if errno == EINTR { continue }
            // ECHILD: another thread reaped it and is about to record the status.
            while true {
                if let known = recorded() { return known }
                usleep(1_000)
            }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift cannot import as macros.
        let result = status & 0x7f == 0 ? ((status >> 8) & 0xff, false) : (status & 0x7f, true)
        lock.lock()
        defer { lock.unlock() }
        reaped = result
        return result
    }

    private func recorded() -> (code: Int32, signaled: Bool)? {
        lock.lock()
        defer { lock.unlock() }
        return reaped
    }

    private static func pipePair() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failure(description: "pipe failed: errno \(errno)") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }
}

/// glibc's spawn actions that Swift's `Glibc` module does not import (they need `_GNU_SOURCE`), looked up
/// at run time; both exist since glibc 2.34.
private enum GNUSpawnActions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>,
                                                UnsafePointer<CChar>) -> Int32

    static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let address = dlsym(dlopen(nil, RTLD_NOW), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
    }
}
