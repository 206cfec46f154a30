import DepotTestSupport
import DepotWire
import Dispatch
import Foundation
import Ledger
import Synchronization
import Testing
import DepotServer

/// The delivery record's gathering: per-loop buffers handed over on the loops' own threads, merged per
/// purchase and file, written in one ledger call per round, and flushed on stop.
@Suite struct DeliveryRecorderTests {
    static let manifest = PackManifest(
        pack: "level2", version: 1, productId: "com.example.depot.level2", chunkSize: 100,
        files: [
            PackManifest.File(path: "a.bin", size: 250, sha256: "", etag: "", url: "", chunks: [
                .init(offset: 0, length: 100, sha256: ""), .init(offset: 100, length: 100, sha256: ""), .init(offset: 200, length: 50, sha256: ""),
            ]),
            PackManifest.File(path: "b.bin", size: 10, sha256: "", etag: "", url: "", chunks: [.init(offset: 0, length: 10, sha256: "")]),
        ])

    static func piece(_ original: String, _ path: String, _ range: Range<Int64>, version: Int = 1) -> DeliveryRecorder.Piece {
        DeliveryRecorder.Piece(originalTransactionID: original, pack: "level2", version: version, path: path, range: range)
    }

    @Test func piecesFromSeveralLoopsAndResponsesMakeWholeChunksAndAreFlushedOnStop() async throws {
        let directory = TemporaryDirectory("delivery-recorder")
        let ledger = try await Ledger.open(at: directory.path + "/ledger.sqlite")
        let progress = Mutex<[DeliveryProgress]>([])
        let recorder = DeliveryRecorder(loops: 2, ledger: ledger, logger: Logger(output: LogOutput(capturing: true)),
                                        manifest: { pack, version in pack == "level2" && version == 1 ? Self.manifest : nil },
                                        onProgress: { new in progress.withLock { $0 += new } })
        // A download interrupted inside chunk 1 and resumed on another connection (another loop).
        recorder.record(loop: 0, Self.piece("p1", "a.bin", 0..<130))
        recorder.record(loop: 1, Self.piece("p1", "a.bin", 130..<250))
        recorder.record(loop: 1, Self.piece("p2", "b.bin", 0..<5))
        // A version no manifest knows (pruned) is dropped.
        recorder.record(loop: 0, Self.piece("p1", "a.bin", 0..<100, version: 9))
        await recorder.stop()
        #expect(recorder.writeCount == 1)
        let p1 = try await ledger.deliveries(originalTransactionID: "p1")
        #expect(p1.map(\.path) == ["a.bin"])
        #expect(p1.first?.chunks.map(\.offset) == [0, 100, 200])
        let p2 = try await ledger.deliveries(originalTransactionID: "p2")
        #expect(p2.first?.chunks.isEmpty == true)
        #expect(p2.first?.sent.ranges == [0..<5])
        #expect(progress.withLock { $0 } == [DeliveryProgress(originalTransactionID: "p1", pack: "level2", version: 1, newChunks: 3)])
        await ledger.close()
        withExtendedLifetime(directory) {}
    }

    /// While the ledger refuses writes, what waits is kept merged: 500 adjacent answers are one range, not 500
    /// pieces (downloads go on while the ledger is away); it is written once the ledger takes writes again.
    @Test func aFailedWriteKeepsTheMergedRangesNotEveryPiece() async throws {
        let directory = TemporaryDirectory("delivery-recorder-failing")
        let ledger = try await Ledger.open(at: directory.path + "/ledger.sqlite")
        let recorder = DeliveryRecorder(loops: 1, ledger: ledger, logger: Logger(output: LogOutput(capturing: true)),
                                        manifest: { pack, version in pack == "level2" && version == 1 ? Self.manifest : nil },
                                        onProgress: { _ in })
        try await ledger.setQueryOnly(true)
        for offset in Int64(0)..<200 { recorder.record(loop: 0, Self.piece("p1", "a.bin", offset..<(offset + 1))) }
        await recorder.stop()
        #expect(recorder.writeCount == 0)
        #expect(recorder.pendingPieceCount == 1)
        try await ledger.setQueryOnly(false)
        await recorder.writePending()
        #expect(recorder.writeCount == 1 && recorder.pendingPieceCount == 0)
        #expect(try await ledger.deliveries(originalTransactionID: "p1").first?.sent.ranges == [0..<200])
        await ledger.close()
        withExtendedLifetime(directory) {}
    }

    /// While the ledger is away, at most `maximumPendingFiles` purchase files wait; pieces of others are dropped
    /// and counted.
    @Test func whatWaitsIsBoundedAndTheRestCounted() async throws {
        let directory = TemporaryDirectory("delivery-recorder-bounded")
        let ledger = try await Ledger.open(at: directory.path + "/ledger.sqlite")
        let recorder = DeliveryRecorder(loops: 1, ledger: ledger, logger: Logger(output: LogOutput(capturing: true)),
                                        maximumPendingFiles: 2, manifest: { _, _ in Self.manifest })
        try await ledger.setQueryOnly(true)
        for purchase in ["p1", "p2", "p3", "p4"] { recorder.record(loop: 0, Self.piece(purchase, "a.bin", 0..<100)) }
        recorder.record(loop: 0, Self.piece("p1", "a.bin", 100..<200))
        await recorder.stop()
        #expect(recorder.droppedPieceCount == 2)
        #expect(recorder.pendingPieceCount == 2)
        try await ledger.setQueryOnly(false)
        await recorder.writePending()
        #expect(try await ledger.deliveries(originalTransactionID: "p1").first?.chunks.count == 2)
        #expect(try await ledger.deliveries(originalTransactionID: "p2").first?.chunks.count == 1)
        #expect(try await ledger.deliveries(originalTransactionID: "p3").isEmpty)
        await ledger.close()
        withExtendedLifetime(directory) {}
    }

    /// Scattered single bytes of one file (a hostile client's ranges) while the ledger is away: at most
    /// `maximumPendingRanges` separate ranges wait, the rest are dropped and counted; a piece inside what
    /// already waits is still taken.
    @Test func scatteredPiecesOfOneFileAreBounded() async throws {
        let directory = TemporaryDirectory("delivery-recorder-scattered")
        let ledger = try await Ledger.open(at: directory.path + "/ledger.sqlite")
        let recorder = DeliveryRecorder(loops: 1, ledger: ledger, logger: Logger(output: LogOutput(capturing: true)),
                                        maximumPendingRanges: 10, manifest: { _, _ in Self.manifest })
        try await ledger.setQueryOnly(true)
        for offset in stride(from: Int64(0), to: 40, by: 2) { recorder.record(loop: 0, Self.piece("p1", "a.bin", offset..<(offset + 1))) }
        recorder.record(loop: 0, Self.piece("p1", "a.bin", 0..<1))
        await recorder.stop()
        #expect(recorder.pendingPieceCount == 10)
        #expect(recorder.droppedPieceCount == 10)
        await ledger.close()
        withExtendedLifetime(directory) {}
    }

    @Test func theFlusherCollectsOnTheLoopsOwnThreadsAndWritesOncePerRound() async throws {
        let directory = TemporaryDirectory("delivery-recorder-loops")
        let ledger = try await Ledger.open(at: directory.path + "/ledger.sqlite")
        let loops = [DispatchQueue(label: "loop0"), DispatchQueue(label: "loop1")]
        let recorder = DeliveryRecorder(loops: 2, ledger: ledger, logger: Logger(output: LogOutput(capturing: true)),
                                        interval: .milliseconds(200),
                                        manifest: { _, _ in Self.manifest })
        recorder.start { job in for (index, loop) in loops.enumerated() { loop.async { job(index) } } }
        // Many small pieces on both "loops", each only from its own queue.
        for offset in stride(from: Int64(0), to: 250, by: 10) {
            loops[Int(offset / 10) % 2].async { recorder.record(loop: Int(offset / 10) % 2, Self.piece("p", "a.bin", offset..<offset + 10)) }
        }
        var delivered = 0
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(90)
        while delivered < 3, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            delivered = try await ledger.deliveries(originalTransactionID: "p").first?.chunks.count ?? 0
        }
        #expect(delivered == 3)
        // 25 pieces, but a handful of writes at most (one per round that had something).
        #expect(recorder.writeCount <= 3)
        await recorder.stop()
        await ledger.close()
        withExtendedLifetime(directory) {}
    }
}
