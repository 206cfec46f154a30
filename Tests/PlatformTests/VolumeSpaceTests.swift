import DepotTestSupport
import Foundation
import Platform
import Testing

/// `statvfs(2)` behind `VolumeSpace`, checked against `df`.
@Suite struct VolumeSpaceTests {
    @Test func systemFiguresMatchDf() async throws {
        let directory = TemporaryDirectory("volume")
        let space = SystemVolumeSpace()
        let total = space.totalBytes(at: directory.path)
        let free = space.freeBytes(at: directory.path)
        #expect(total > 0)
        #expect(free > 0 && free <= total)
        let df = try await ProcessRunner.run("/bin/df", ["-B1", "--output=size,avail", directory.path])
        let figures = try #require(df.stdout.split(separator: "\n").last).split(separator: " ").compactMap { Int64($0) }
        try #require(figures.count == 2, "\(df.stdout)")
        #expect(total == figures[0])
        // Free space moves while other work writes; a few MiB apart at most within a moment.
        #expect(abs(free - figures[1]) < 256 << 20, "statvfs \(free) vs df \(figures[1])")
    }

    @Test func aPathThatCannotBeExaminedHasNoSpace() {
        let space = SystemVolumeSpace()
        #expect(space.freeBytes(at: "/nonexistent/depot/volume") == 0)
        #expect(space.totalBytes(at: "/nonexistent/depot/volume") == 0)
    }

    @Test func fixedFiguresForEveryPath() {
        let space = FixedVolumeSpace(free: 100_000, total: 1_000_000)
        #expect(space.freeBytes(at: "/") == 100_000 && space.freeBytes(at: "/anything") == 100_000)
        #expect(space.totalBytes(at: "/") == 1_000_000)
    }
}
