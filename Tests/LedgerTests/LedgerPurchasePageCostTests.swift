import Foundation
import Testing
import Ledger

/// What a page of the support view (`Ledger.purchases(account:)`, behind `GET /admin/v1/purchases` and
/// `depot purchases show`) costs the database: a few queries, the same for a page of 2 purchases as for one of
/// 50, on both backends (it was six statements per purchase on SQLite, three round trips on PostgreSQL).
@Suite struct LedgerPurchasePageCostTests {
    /// Statements run (SQLite) or round trips made (PostgreSQL: the pool's one connection) so far.
    static func queries(_ ledger: Ledger) async throws -> Int {
        if let pool = ledger.postgresPool {
            return try await pool.run(nil, failure: { .readFailed(message: $0) }) { connection throws(PostgresError) in connection.roundTrips }
        }
        return try #require(try await ledger.sqliteStatementsRun())
    }

    /// The queries `body` costs.
    static func cost(_ ledger: Ledger, _ body: () async throws -> Void) async throws -> Int {
        let before = try await queries(ledger)
        try await body()
        return try await queries(ledger) - before
    }

    /// `count` purchases bound to `account` (IDs `<account>-<n>`), each with something in every part of its
    /// record: a renewal for every other one, two delivered files, a consumption answer, and every third one
    /// refunded. Every purchase's facts differ from the others' (the bytes sent), so that a page that gave one
    /// purchase another's rows would show it.
    static func fill(_ ledger: Ledger, account: String, count: Int) async throws {
        var purchases: [LedgerPurchase] = []
        for number in 0..<count {
            let original = "\(account)-\(number)"
            purchases.append(LedgerFixture.purchase(original, daysAgo: 10 - Double(number) / 100))
            if number.isMultiple(of: 2) {
                purchases.append(LedgerFixture.purchase(original + "-r", original: original, daysAgo: 5 - Double(number) / 100))
            }
        }
        _ = try await ledger.record(purchases, account: account, policy: .transfer, now: LedgerFixture.now)
        var spans: [DeliverySpan] = []
        for number in 0..<count {
            let original = "\(account)-\(number)"
            spans.append(DeliverySpan(originalTransactionID: original, pack: "level2", version: 1, path: "a.bin",
                                      sent: ByteCoverage([0..<Int64(100 + number)]), chunks: [0..<100, 100..<200],
                                      sentAt: LedgerFixture.day(Double(-number) / 100)))
            spans.append(DeliverySpan(originalTransactionID: original, pack: "level2", version: 2, path: "b.bin",
                                      sent: ByteCoverage([0..<Int64(1 + number)]), chunks: [0..<400], sentAt: LedgerFixture.now))
            let request = ConsumptionRequest(notificationUUID: "c-\(original)", transactionId: original, originalTransactionId: original,
                                             productId: "com.example.depot.level2", environment: "Production", signedDate: 1_796_083_200_000)
            #expect(try await ledger.queueConsumptionAnswer(request, now: LedgerFixture.now))
            if number.isMultiple(of: 3) {
                _ = try await ledger.apply(notificationID: "refund-\(original)", type: "REFUND",
                                           revoke: [LedgerFixture.revocation(original)], restore: [], now: LedgerFixture.now)
            }
        }
        _ = try await ledger.recordDeliveries(spans)
    }

    @Test(arguments: LedgerBackend.allCases)
    func aPageCostsTheSameFewQueriesWhateverItHolds(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let ledger = try await target.open(poolSize: 1)
            try await Self.fill(ledger, account: "many", count: 50)
            try await Self.fill(ledger, account: "few", count: 2)
            // PostgreSQL prepares a statement on a connection's first use of it: a first page pays for that.
            _ = try await ledger.purchases(account: "few")
            _ = try await ledger.purchase(transactionID: "few-0")

            var few = PurchasePage(purchases: [], next: nil)
            var many = few
            let fewCost = try await Self.cost(ledger) { few = try await ledger.purchases(account: "few") }
            let manyCost = try await Self.cost(ledger) { many = try await ledger.purchases(account: "many") }
            #expect(few.purchases.count == 2)
            #expect(many.purchases.count == 50)
            #expect(manyCost == fewCost, "a page of 50 cost \(manyCost) queries, one of 2 cost \(fewCost)")
            // One read: the page, the transactions, bindings and revocations, the delivery files and chunks, the
            // consumption answers, with BEGIN and COMMIT (it was 303 statements on SQLite, 156 round trips on PostgreSQL).
            #expect(manyCost <= 9, "a page of 50 cost \(manyCost) queries")
            var renewed: PurchaseRecord?
            let one = try await Self.cost(ledger) { renewed = try await ledger.purchase(transactionID: "many-8-r") }
            #expect(renewed?.originalTransactionID == "many-8")
            // The same with the look-up of the original instead of the page (up to three statements on SQLite).
            #expect(one <= 11, "a look-up by transaction cost \(one) queries")

            // Each purchase of the page is the one a look-up of it alone finds, with its own records.
            for (position, record) in many.purchases.enumerated() {
                let number = 49 - position
                #expect(record.originalTransactionID == "many-\(number)")
                #expect(record == (try await ledger.purchase(transactionID: record.originalTransactionID)))
                #expect(record.transactions.count == (number.isMultiple(of: 2) ? 2 : 1))
                #expect(record.revocations.count == (number.isMultiple(of: 3) ? 1 : 0))
                #expect(record.deliveries.map { "\($0.version):\($0.chunks):\($0.sentBytes)" } == ["1:1:\(100 + number)", "2:0:\(1 + number)"])
                #expect(record.consumptionAnswers.map(\.request.notificationUUID) == ["c-many-\(number)"])
            }
            await ledger.close()
        }
    }

    /// The list a SQLite batched read binds reaches SQL as the texts it was made of, whatever they hold.
    @Test func aTextListReachesSQLiteAsItIs() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        defer { database.close() }
        let texts = ["plain", "", "quote \" and \\ backslash", "tab\tnew\nline\u{1}", "é 🎮", "[\"x\"]", "2000000123:x"]
        let read = try database.query("SELECT value FROM json_each(?) ORDER BY key", [SQLiteValue.textList(texts)]).map { $0[0].text }
        #expect(read == texts)
        #expect(try database.query("SELECT count(*) FROM json_each(?)", [SQLiteValue.textList([])]).first?.first?.integer == 0)
    }
}
