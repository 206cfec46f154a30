import Foundation
import Testing
import Ledger

@Suite struct LedgerDeliveryTests {
    static let chunks: [Range<Int64>] = [0..<100, 100..<200, 200..<250]

    static func span(_ ranges: [Range<Int64>], original: String = "1", path: String = "stages.bin", at seconds: Double = 0,
                     version: Int = 1) -> DeliverySpan {
        DeliverySpan(originalTransactionID: original, pack: "level2", version: version, path: path, sent: ByteCoverage(ranges),
                     chunks: chunks, sentAt: LedgerFixture.now.addingTimeInterval(seconds))
    }

    @Test(arguments: LedgerBackend.allCases)
    func chunksCountOnceAllTheirBytesWereSentAcrossBatches(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            #expect(try await ledger.recordDeliveries([Self.span([0..<60])]).isEmpty)
            // The resume inside chunk 0 completes it.
            let progress = try await ledger.recordDeliveries([Self.span([60..<150], at: 1)])
            #expect(progress == [DeliveryProgress(originalTransactionID: "1", pack: "level2", version: 1, newChunks: 1)])
            // Sending a delivered chunk again adds nothing.
            #expect(try await ledger.recordDeliveries([Self.span([0..<100], at: 2)]).isEmpty)
            let records = try await ledger.deliveries(originalTransactionID: "1")
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.chunks == [DeliveredChunk(offset: 0, length: 100, deliveredAt: LedgerFixture.now.addingTimeInterval(1))])
            #expect(record.sent.ranges == [0..<150])
            #expect(record.deliveredBytes == 100)
            #expect(record.firstSent == LedgerFixture.now)
            #expect(record.lastSent == LedgerFixture.now.addingTimeInterval(2))

            let rest = try await ledger.recordDeliveries([Self.span([150..<250], at: 3), Self.span([0..<100], path: "README.txt")])
            #expect(Set(rest) == [DeliveryProgress(originalTransactionID: "1", pack: "level2", version: 1, newChunks: 3)])
            let all = try await ledger.deliveries(originalTransactionID: "1")
            #expect(all.map(\.path) == ["README.txt", "stages.bin"])
            #expect(all[1].chunks.map(\.offset) == [0, 100, 200])
            #expect(all[1].deliveredBytes == 250)
            #expect(try await ledger.deliveries(originalTransactionID: "2").isEmpty)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func recordsSurviveAReopenAndStayApartPerPurchaseAndVersion(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let first = try await target.open()
            _ = try await first.recordDeliveries([Self.span([0..<120], original: "a"), Self.span([0..<50], original: "b"), Self.span([0..<250], original: "a", version: 2)])
            await first.close()
            let second = try await target.open()
            let progress = try await second.recordDeliveries([Self.span([50..<100], original: "b")])
            #expect(progress == [DeliveryProgress(originalTransactionID: "b", pack: "level2", version: 1, newChunks: 1)])
            let a = try await second.deliveries(originalTransactionID: "a")
            #expect(a.map(\.version) == [1, 2])
            #expect(a.map(\.deliveredBytes) == [100, 250])
            await second.close()
        }
    }

    /// A file record already holding the most separate pieces it keeps: the next piece, the shortest of all, still
    /// completes its chunk (the chunks are credited before the stored ranges are trimmed).
    @Test(arguments: LedgerBackend.allCases)
    func aChunkCompletedByThePieceTrimmingForgetsIsStillDelivered(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            var scattered: [Range<Int64>] = []
            var chunks: [Range<Int64>] = [0..<2]
            for index in 0..<Int64(ByteCoverage.maximumRanges) {
                let start: Int64 = 1_000 + index * 10
                scattered.append(start..<(start + 5))
                chunks.append(start..<(start + 8))
            }
            let span = { (ranges: [Range<Int64>]) in
                DeliverySpan(originalTransactionID: "1", pack: "level2", version: 1, path: "stages.bin", sent: ByteCoverage(ranges),
                             chunks: chunks, sentAt: LedgerFixture.now)
            }
            #expect(try await ledger.recordDeliveries([span(scattered)]).isEmpty)
            let progress = try await ledger.recordDeliveries([span([0..<2])])
            #expect(progress.map(\.newChunks) == [1])
            let record = try #require(try await ledger.deliveries(originalTransactionID: "1").first)
            #expect(record.chunks.map(\.offset) == [0])
            #expect(record.sent.ranges.count == ByteCoverage.maximumRanges)
        }
    }

    @Test func twoInstancesSendingPiecesOfOneChunkShareOneRecord() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let one = try await target.open()
            let two = try await target.open()
            async let left = one.recordDeliveries([Self.span([0..<50])])
            async let right = two.recordDeliveries([Self.span([50..<100])])
            let both = try await left + right
            #expect(both.map(\.newChunks) == [1])
            let record = try #require(try await one.deliveries(originalTransactionID: "1").first)
            #expect(record.chunks.map(\.offset) == [0])
            #expect(record.sent.ranges == [0..<100])
            await one.close()
            await two.close()
        }
    }
}
