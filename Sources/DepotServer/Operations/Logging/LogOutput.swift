import Foundation
import Synchronization

/// Where log lines go: standard error by default, a buffer in tests.
///
/// Writing to standard error never blocks the caller (an event loop logging a request): lines go to a
/// bounded in-memory queue that a writer thread drains. If standard error stalls (a paused pipe) and the
/// queue fills, new lines are dropped and counted, and a line says how many once writing resumes.
public final class LogOutput: Sendable {
    private let capturing: Bool
    private let captured = Mutex<[String]>([])
    private let queue = Mutex<(lines: [String], bytes: Int, dropped: Int, writing: Bool)>(([], 0, 0, false))
    private let wake = LogWake()
    /// How the notice of dropped lines is written (the format of the server using this output).
    private let noticeFormat = Mutex<LogFormat>(.text)
    private static let capacityBytes = 8 << 20

    /// Lines go to standard error.
    public static let standardError = LogOutput(capturing: false)

    /// - Parameter capturing: keep lines in memory instead of writing them (tests).
    public init(capturing: Bool) {
        self.capturing = capturing
        if !capturing {
            let thread = Thread { [self] in drain() }
            thread.name = "depot-log"
            thread.start()
        }
    }

    /// Lines captured so far (capturing outputs only).
    public var lines: [String] { captured.withLock { $0 } }

    /// Writes the notice of dropped lines in `format` from now on.
    func adopt(_ format: LogFormat) {
        noticeFormat.withLock { $0 = format }
    }

    func write(_ line: String) {
        if capturing {
            captured.withLock { $0.append(line) }
            return
        }
        let queued = queue.withLock { q -> Bool in
            guard q.bytes + line.utf8.count < Self.capacityBytes else {
                q.dropped += 1
                return false
            }
            q.lines.append(line)
            q.bytes += line.utf8.count + 1
            return true
        }
        if queued { wake.signal() }
    }

    /// Waits (briefly, bounded) until the queued lines are written: before the process exits.
    public func flush(timeout: Double = 2) {
        guard !capturing else { return }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if queue.withLock({ $0.lines.isEmpty && !$0.writing }) { return }
            wake.signal()
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    private func drain() {
        while true {
            wake.wait()
            while true {
                let (lines, dropped) = queue.withLock { q -> ([String], Int) in
                    let taken = (q.lines, q.dropped)
                    q.lines.removeAll(keepingCapacity: true)
                    q.bytes = 0
                    q.dropped = 0
                    q.writing = !taken.0.isEmpty || taken.1 > 0
                    return taken
                }
                if lines.isEmpty && dropped == 0 { break }
                var text = ""
                for line in lines { text += line; text += "\n" }
                if dropped > 0 {
                    let format = noticeFormat.withLock { $0 }
                    text += LogLine.render(format: format, level: .warning, event: .logsDropped, requestID: nil,
                                           message: "\(dropped) log lines dropped while standard error was not writable")
                    text += "\n"
                }
                text.withUTF8 { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let n = Foundation.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                        if n <= 0 { break }
                        offset += n
                    }
                }
                queue.withLock { $0.writing = false }
            }
        }
    }
}

/// Wakes the log writer.
private final class LogWake: @unchecked Sendable {
    // NSCondition is thread-safe; `pending` is only touched under it.
    private let condition = NSCondition()
    private var pending = false

    func signal() {
        condition.lock()
        pending = true
        condition.signal()
        condition.unlock()
    }

    func wait() {
        condition.lock()
        while !pending { condition.wait() }
        pending = false
        condition.unlock()
    }
}
