import Testing
import Ledger

@Suite struct ByteCoverageTests {
    @Test func mergesOverlappingAndTouchingRangesInAnyOrder() {
        var coverage = ByteCoverage([10..<20, 0..<5])
        coverage.insert(5..<10)
        #expect(coverage.ranges == [0..<20])
        coverage.insert(30..<40)
        coverage.insert(25..<35)
        #expect(coverage.ranges == [0..<20, 25..<40])
        coverage.insert(15..<26)
        #expect(coverage.ranges == [0..<40])
        coverage.insert(50..<50)
        coverage.insert(-5..<3)
        #expect(coverage.ranges == [0..<40])
        #expect(coverage.byteCount == 40)
    }

    @Test func aChunkCountsOnlyWhenCoveredWhole() {
        let chunks: [Range<Int64>] = [0..<100, 100..<200, 200..<250]
        var coverage = ByteCoverage([0..<60])
        #expect(coverage.coveredChunks(chunks).isEmpty)
        // A resume inside the first chunk completes it.
        coverage.insert(60..<150)
        #expect(coverage.coveredChunks(chunks) == [0..<100])
        coverage.insert(151..<250)
        #expect(coverage.coveredChunks(chunks) == [0..<100, 200..<250])
        coverage.insert(150..<151)
        #expect(coverage.coveredChunks(chunks) == chunks)
    }

    /// A write offers the ledger only the chunks it completes, not every chunk covered so far.
    @Test func theChunksAWriteCompletesAreThoseNotCoveredBefore() {
        let chunks: [Range<Int64>] = [0..<100, 100..<200, 200..<250]
        let before = ByteCoverage([0..<150])
        var after = before
        after.formUnion(ByteCoverage([150..<250]))
        #expect(after.newlyCoveredChunks(chunks, before: before) == [100..<200, 200..<250])
        #expect(after.newlyCoveredChunks(chunks, before: after).isEmpty)
        #expect(after.newlyCoveredChunks(chunks, before: ByteCoverage()) == chunks)
    }

    @Test func encodesAndRefusesMalformedText() {
        let coverage = ByteCoverage([0..<5, 7..<9])
        #expect(coverage.encoded == "0-5,7-9")
        #expect(ByteCoverage(encoded: coverage.encoded) == coverage)
        #expect(ByteCoverage(encoded: "") == ByteCoverage())
        for bad in ["5-5", "7-3", "a-b", "1-2,", "-1-4", "1"] {
            #expect(ByteCoverage(encoded: bad) == nil, "\(bad)")
        }
    }

    @Test func staysBoundedByForgettingTheShortestPieces() {
        var coverage = ByteCoverage()
        for index in 0..<Int64(ByteCoverage.maximumRanges + 10) {
            coverage.insert(index * 10..<index * 10 + 1)
        }
        coverage.insert(1_000_000..<2_000_000)
        // Inserting keeps everything: what the union covers is credited before anything is forgotten.
        #expect(coverage.ranges.count == ByteCoverage.maximumRanges + 11)
        coverage.trim()
        #expect(coverage.ranges.count == ByteCoverage.maximumRanges)
        #expect(coverage.covers(1_000_000..<2_000_000))
    }

    /// A range that covers a chunk whole outlives shorter ones, and even longer ones that cover none.
    @Test func trimmingKeepsTheRangesThatCoverAChunk() {
        let chunks: [Range<Int64>] = [100_000..<100_002, 200_000..<200_003]
        var coverage = ByteCoverage([100_000..<100_002, 200_000..<200_003])
        for index in 0..<Int64(ByteCoverage.maximumRanges) {
            coverage.insert(index * 10..<index * 10 + 5)
        }
        coverage.trim(keeping: chunks)
        #expect(coverage.ranges.count == ByteCoverage.maximumRanges)
        #expect(coverage.coveredChunks(chunks) == chunks)
        #expect(!coverage.covers(0..<5) && coverage.covers(20..<25), "the first of the equally short pieces went")
        coverage.trim(to: 1, keeping: chunks)
        #expect(coverage.ranges == [200_000..<200_003], "the shortest of the chunks' ranges goes last")
    }
}
