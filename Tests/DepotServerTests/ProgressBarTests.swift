import DepotClient
import DepotCommands
import Foundation
import Testing

/// `depot fetch`'s progress display is told of every chunk; it must only make and write text when it shows it.
@Suite struct ProgressBarTests {
    final class Lines {
        var written: [String] = []
    }

    static func progress(_ completed: Int64, of total: Int64) -> PackDownloadProgress {
        PackDownloadProgress(completedBytes: completed, totalBytes: total, bytesPerSecond: 1_000_000, currentPath: "level.bin")
    }

    @Test func aTerminalIsRedrawnAtMostTenTimesASecondAndAtTheEnd() {
        let lines = Lines()
        var bar = ProgressBar(isTerminal: true) { lines.written.append($0) }
        let total: Int64 = 1_000
        for completed in 1..<total { bar.show(Self.progress(completed, of: total)) }
        // 999 chunks told within far less than a second: the first redraw only (a very slow machine may take a
        // few tenths of a second over the loop, hence the bound).
        #expect(lines.written.count >= 1 && lines.written.count <= 5, "\(lines.written.count) redraws")
        #expect(lines.written.first?.hasPrefix("\r[") == true)
        bar.show(Self.progress(total, of: total))
        #expect(lines.written.last?.contains("100%") == true, "the end is always shown")
    }

    @Test func plainOutputWritesALinePerTenPercent() {
        let lines = Lines()
        var bar = ProgressBar(isTerminal: false) { lines.written.append($0) }
        let total: Int64 = 1_000
        for completed in 1...total { bar.show(Self.progress(completed, of: total)) }
        // 0 %, 10 %, ..., 90 %, 100 %: eleven lines (a second passing mid-loop on a very slow machine adds one).
        #expect(lines.written.count >= 11 && lines.written.count <= 13, "\(lines.written)")
        #expect(lines.written.last?.hasPrefix("progress 100% 1000/1000 bytes ") == true)
    }
}
