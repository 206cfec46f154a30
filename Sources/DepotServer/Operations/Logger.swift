import Foundation
import Synchronization

/// Where log lines go: standard error by default, a buffer in tests.
public final class LogOutput: Sendable {
    private let capturing: Bool
    private let captured = Mutex<[String]>([])
    private let writeLock = Mutex<Void>(())

    /// Lines go to standard error.
    public static let standardError = LogOutput(capturing: false)

    /// - Parameter capturing: keep lines in memory instead of writing them (tests).
    public init(capturing: Bool) {
        self.capturing = capturing
    }

    /// Lines captured so far (capturing outputs only).
    public var lines: [String] { captured.withLock { $0 } }

    func write(_ line: String) {
        if capturing {
            captured.withLock { $0.append(line) }
            return
        }
        var text = line
        text.append("\n")
        writeLock.withLock { _ in
            text.withUTF8 { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = Foundation.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
        }
    }
}

/// A small structured logger: `LEVEL message`. Libraries take one; nothing global.
public struct Logger: Sendable {
    public let output: LogOutput

    public init(output: LogOutput = .standardError) {
        self.output = output
    }

    public func info(_ message: String) { output.write("info: \(message)") }
    public func warning(_ message: String) { output.write("warning: \(message)") }
    public func error(_ message: String) { output.write("error: \(message)") }
    /// A line exactly as given (the access log).
    func raw(_ line: String) { output.write(line) }
}
