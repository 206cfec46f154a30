public import Foundation

/// Runs a program to completion and captures its output (for CLI tests and `curl`).
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

public enum ProcessRunner {
    /// Runs `executable` with `arguments`; `environment` entries are added to the current environment.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           currentDirectory: String? = nil, input: Data? = nil) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let child = try SpawnedChild.start(executable, arguments, environment: env, currentDirectory: currentDirectory)
        // Read both pipes on threads of their own so a chatty child cannot fill one and block, and write the
        // input on a third so a child that answers before reading all of it cannot block us either.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        Thread.detachNewThread { outData = child.output.readDataToEndOfFile(); group.leave() }
        group.enter()
        Thread.detachNewThread { errData = child.errorOutput.readDataToEndOfFile(); group.leave() }
        group.enter()
        Thread.detachNewThread {
            if let input { try? child.input.write(contentsOf: input) }
            try? child.input.close()
            group.leave()
        }
        let status = child.waitForExit()
        group.wait()
        return ProcessResult(status: status, stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs `executable` as the blocking ``run(_:_:environment:currentDirectory:input:)`` does, waiting for the
    /// child and its pipes on a thread of its own (``OffPool``) and resuming the caller from there: an `async`
    /// test never holds one of the few cooperative threads for a whole child's run, which would stall every other
    /// task of the test process (a 2-core machine has two). In an `async` context a call without `await` is a
    /// compile error, so every async caller uses this one; synchronous callers keep the blocking one.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           currentDirectory: String? = nil, input: Data? = nil) async throws -> ProcessResult {
        try await OffPool.run {
            try run(executable, arguments, environment: environment, currentDirectory: currentDirectory, input: input)
        }
    }

    /// The first executable named `name` on PATH.
    public static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// The `depot` executable built next to the test bundle.
    public static var depotExecutable: String { builtExecutable("depot") }

    /// `depot-test-publisher` (`depot publish` with a crash point or a fixed free space), built next to `depot`.
    public static var testPublisherExecutable: String { builtExecutable("depot-test-publisher") }

    /// An executable product of this package, built next to the test bundle.
    public static func builtExecutable(_ name: String) -> String {
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        // swift test runs the xctest bundle from .build/<triple>/debug.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/" + name).path
    }
}
