import Foundation
import Testing
import Ledger

/// The pack version's totals kept with each delivery record (spec app-store-server-api §7), so a refund request
/// about a version whose directory was pruned is still judged; a record written before they were kept has none.
@Suite struct LedgerVersionTotalsTests {
    static let totals = VersionTotals(chunks: 7, bytes: 1_250)

    static func span(_ ranges: [Range<Int64>], original: String = "1", path: String = "stages.bin",
                     totals: VersionTotals?) -> DeliverySpan {
        DeliverySpan(originalTransactionID: original, pack: "level2", version: 1, path: path, sent: ByteCoverage(ranges),
                     chunks: LedgerDeliveryTests.chunks, sentAt: LedgerFixture.now, versionTotals: totals)
    }

    @Test(arguments: LedgerBackend.allCases)
    func totalsAreRecordedWithTheFileAndKeptByLaterWrites(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let first = try await target.open()
            _ = try await first.recordDeliveries([Self.span([0..<100], totals: Self.totals),
                                                  Self.span([0..<10], original: "2", totals: nil)])
            // A later write without totals keeps those recorded; one with totals fills a row that had none.
            _ = try await first.recordDeliveries([Self.span([100..<200], totals: nil),
                                                  Self.span([10..<20], original: "2", totals: Self.totals)])
            await first.close()
            let second = try await target.open()
            let one = try await second.deliveries(originalTransactionID: "1")
            #expect(one.map(\.versionTotals) == [Self.totals])
            #expect(one.first?.deliveredBytes == 200)
            #expect(try await second.deliveries(originalTransactionID: "2").map(\.versionTotals) == [Self.totals])
            _ = try await second.recordDeliveries([Self.span([0..<5], original: "3", totals: nil)])
            #expect(try await second.deliveries(originalTransactionID: "3").map(\.versionTotals) == [nil])
            await second.close()
        }
    }

    /// A file at schema version 5 (before the totals): its delivery rows survive the migration without totals.
    @Test func aRecordFromBeforeTheMigrationHasNoTotals() async throws {
        try await LedgerFixture.withPath { path in
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let raw = try SQLiteDatabase(path: path)
            for (index, migration) in SQLiteLedgerSchema.migrations.prefix(5).enumerated() {
                try raw.execute(migration)
                try raw.execute("PRAGMA user_version = \(index + 1)")
            }
            try raw.execute("""
                INSERT INTO delivery_files (original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms)
                VALUES ('old', 'level2', 1, 'stages.bin', '0-100', 1, 2)
                """)
            raw.close()
            let ledger = try await Ledger.open(at: path)
            #expect(try await ledger.pragma("user_version") == String(SQLiteLedgerSchema.currentVersion))
            let records = try await ledger.deliveries(originalTransactionID: "old")
            #expect(records.map(\.sent.ranges) == [[0..<100]])
            #expect(records.map(\.versionTotals) == [nil])
            await ledger.close()
        }
    }
}
