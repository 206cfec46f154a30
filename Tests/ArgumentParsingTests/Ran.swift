import Synchronization

/// What the sample commands did, per test (each test reads what it caused, in order).
enum Ran {
    @TaskLocal static var log: RunLog?

    static func record(_ line: String) {
        log?.lines.withLock { $0.append(line) }
    }
}

final class RunLog: Sendable {
    let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
}

/// Captures stdout and stderr of a runner.
final class Captured: Sendable {
    let output = Mutex<String>("")
    let errors = Mutex<String>("")
    var stdout: String { output.withLock { $0 } }
    var stderr: String { errors.withLock { $0 } }
}
