import DepotClient
import Foundation

/// Download progress on the terminal: one line redrawn in place on a TTY, plain lines otherwise.
struct ProgressBar {
    let isTerminal: Bool
    private var lastPlainLine = Date.distantPast
    private var lastPercent = -1

    init(isTerminal: Bool = isatty(STDOUT_FILENO) == 1) {
        self.isTerminal = isTerminal
    }

    mutating func show(_ progress: PackDownloadProgress) {
        let percent = Int((progress.progress * 100).rounded(.down))
        let rate = progress.bytesPerSecond.map { Self.bytes(Int64($0)) + "/s" } ?? "--"
        let remaining = progress.timeRemaining.map(Self.duration) ?? "--"
        let amounts = "\(Self.bytes(progress.completedBytes)) / \(Self.bytes(progress.totalBytes))"
        if isTerminal {
            let width = 30
            let filled = min(width, Int(progress.progress * Double(width)))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            let line = "[\(bar)] \(String(format: "%3d", percent))%  \(amounts)  \(rate)  eta \(remaining)"
            FileHandle.standardOutput.write(Data(("\r" + line + "\u{1B}[K").utf8))
        } else {
            // A line per 10 % or per second, whichever comes first.
            let now = Date()
            guard percent / 10 != lastPercent / 10 || now.timeIntervalSince(lastPlainLine) >= 1 || percent == 100 else { return }
            lastPercent = percent
            lastPlainLine = now
            let line = "progress \(percent)% \(progress.completedBytes)/\(progress.totalBytes) bytes \(rate) eta \(remaining)\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }

    /// Ends the redrawn line.
    func finish() {
        if isTerminal { FileHandle.standardOutput.write(Data("\n".utf8)) }
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
