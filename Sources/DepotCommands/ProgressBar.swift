package import DepotClient
import Foundation

/// Download progress on the terminal: one line redrawn in place on a TTY, plain lines otherwise.
package struct ProgressBar {
    package let isTerminal: Bool
    private var lastPlainLine = Date.distantPast
    private var lastPercent = -1
    private var lastRedraw = Date.distantPast

    /// Where the text goes (standard output; tests pass their own).
    private let write: (String) -> Void

    package init(isTerminal: Bool = isatty(STDOUT_FILENO) == 1,
                 write: @escaping (String) -> Void = { FileHandle.standardOutput.write(Data($0.utf8)) }) {
        self.isTerminal = isTerminal
        self.write = write
    }

    /// Shows `progress`, at most ten redraws a second on a terminal and a line per 10 % or second otherwise
    /// (it is called for every chunk: the text is only made when it is shown).
    package mutating func show(_ progress: PackDownloadProgress) {
        let percent = Int((progress.progress * 100).rounded(.down))
        let now = Date()
        if isTerminal {
            guard now.timeIntervalSince(lastRedraw) >= 0.1 || percent == 100 else { return }
            lastRedraw = now
        } else {
            guard percent / 10 != lastPercent / 10 || now.timeIntervalSince(lastPlainLine) >= 1 || percent == 100 else { return }
            lastPercent = percent
            lastPlainLine = now
        }
        let rate = progress.bytesPerSecond.map { Self.bytes(Int64($0)) + "/s" } ?? "--"
        let remaining = progress.timeRemaining.map(Self.duration) ?? "--"
        let amounts = "\(Self.bytes(progress.completedBytes)) / \(Self.bytes(progress.totalBytes))"
        if isTerminal {
            let width = 30
            let filled = min(width, Int(progress.progress * Double(width)))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            let line = "[\(bar)] \(String(format: "%3d", percent))%  \(amounts)  \(rate)  eta \(remaining)"
            write("\r" + line + "\u{1B}[K")
        } else {
            let line = "progress \(percent)% \(progress.completedBytes)/\(progress.totalBytes) bytes \(rate) eta \(remaining)\n"
            write(line)
        }
    }

    /// Ends the redrawn line.
    package func finish() {
        if isTerminal { write("\n") }
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: TimeInterval) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return "\(s / 3600)h\(String(format: "%02d", s / 60 % 60))m"
    }
}
