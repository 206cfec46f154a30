import DepotTestSupport
import Foundation
import Testing
import Ledger

@Suite struct LedgerDurabilityTests {
    @Test(arguments: LedgerBackend.allCases)
    func recordCloseReopenReadsEverythingBack(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let purchases = [
                LedgerFixture.purchase("s1", original: "s", product: "com.example.depot.sub", daysAgo: 30, expiresInDays: 0, source: .jws),
                LedgerFixture.purchase("s2", original: "s", product: "com.example.depot.sub", daysAgo: 0, expiresInDays: 30, source: .jws),
                LedgerFixture.purchase("p1", product: "com.example.depot.level3"),
            ]
            let ledger = try await target.open()
            _ = try await ledger.record(purchases, account: "alice", policy: .transfer, now: LedgerFixture.now)
            await ledger.close()

            let reopened = try await target.open()
            #expect(try await reopened.purchases(originalTransactionID: "s") == Array(purchases[0...1]))
            #expect(try await reopened.purchases(originalTransactionID: "p1") == [purchases[2]])
            #expect(try await reopened.purchases(originalTransactionID: "unknown") == [])
            await reopened.close()
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func committedWriteIsInTheDatabaseBeforeClose(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let writer = try await target.open()
            _ = try await writer.record([LedgerFixture.purchase("1")], account: "alice", policy: .first, now: LedgerFixture.now)
            // A second connection, as a restarted process would open it, sees the write without any close.
            let other = try await target.open()
            #expect(try await other.purchases(originalTransactionID: "1") == [LedgerFixture.purchase("1")])
            #expect(other.access(originalTransactionID: "1", account: "bob") == .transferred)
            await other.close()
            await writer.close()
        }
    }

    /// Another process (Debian's `sqlite3` shell, installed when missing) sees the write once it is acknowledged.
    @Test func anotherProcessReadsTheCommittedWrite() async throws {
        let sqliteShell = try await DebianPackage.tool("sqlite3", package: "sqlite3")
        try await LedgerFixture.withPath { path in
            let ledger = try await Ledger.open(at: path)
            _ = try await ledger.record([LedgerFixture.purchase("42")], account: "alice", policy: .first, now: LedgerFixture.now)

            let result = try await ProcessRunner.run(sqliteShell, [path, "SELECT transaction_id, product_id FROM transactions; SELECT account FROM account_bindings;"])
            #expect(result.status == 0)
            #expect(result.stdout == "42|com.example.depot.level2\nalice\n")
            await ledger.close()
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func failedWriteThrowsAndLeavesTheIndexAndDatabaseUnchanged(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            #expect(await ledger.checkWritable())
            try await ledger.setQueryOnly(true)
            #expect(await !ledger.checkWritable())

            await #expect {
                _ = try await ledger.record(
                    [LedgerFixture.purchase("1"), LedgerFixture.purchase("2")], account: "bob", policy: .transfer, now: LedgerFixture.now)
            } throws: { error in
                guard case .writeFailed(let message) = error as? LedgerError else { return false }
                // SQLite: "attempt to write a readonly database"; PostgreSQL: "... in a read-only transaction".
                return message.contains("readonly") || message.contains("read-only")
            }
            await #expect(throws: LedgerError.self) {
                _ = try await ledger.apply(
                    notificationID: "n", type: "REFUND", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.now)
            }
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .allowed)
            #expect(ledger.access(originalTransactionID: "1", account: "bob") == .transferred)

            try await ledger.setQueryOnly(false)
            #expect(await ledger.checkWritable())
            #expect(try await ledger.purchases(originalTransactionID: "2") == [])
            // The failed notification was not marked processed: its redelivery applies.
            #expect(try await ledger.apply(
                notificationID: "n", type: "REFUND", revoke: [LedgerFixture.revocation("1")], restore: [], now: LedgerFixture.now))
            #expect(ledger.access(originalTransactionID: "1", account: "alice") == .revoked)
        }
    }

    @Test func readOnlyCopyRefusesWritesAndKeepsItsIndex() async throws {
        try await LedgerFixture.withPath { path in
            let ledger = try await Ledger.open(at: path)
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            await ledger.close()

            let copy = path + ".copy"
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let readOnly = try await Ledger.open(at: copy, readOnly: true)
            #expect(await !readOnly.checkWritable())
            #expect(readOnly.access(originalTransactionID: "1", account: "bob") == .transferred)
            await #expect(throws: LedgerError.self) {
                _ = try await readOnly.record([LedgerFixture.purchase("1")], account: "bob", policy: .transfer, now: LedgerFixture.now)
            }
            #expect(readOnly.access(originalTransactionID: "1", account: "bob") == .transferred)
            #expect(readOnly.access(originalTransactionID: "1", account: "alice") == .allowed)
            await readOnly.close()
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func callsAfterCloseThrowClosedButAccessStillAnswers(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let ledger = try await target.open()
            _ = try await ledger.record([LedgerFixture.purchase("1")], account: "alice", policy: .transfer, now: LedgerFixture.now)
            await ledger.close()
            await #expect(throws: LedgerError.closed) {
                _ = try await ledger.record([LedgerFixture.purchase("2")], account: nil, policy: .transfer, now: LedgerFixture.now)
            }
            await #expect(throws: LedgerError.closed) {
                _ = try await ledger.purchases(originalTransactionID: "1")
            }
            #expect(await !ledger.checkWritable())
            #expect(ledger.access(originalTransactionID: "1", account: "bob") == .transferred)
            await ledger.close() // twice is harmless
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func concurrentCallsFromManyTasksAreAllRecorded(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            let count = 200
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<count {
                    group.addTask {
                        let purchase = LedgerFixture.purchase("t\(number)", original: "o\(number % 50)", daysAgo: Double(number))
                        let decisions = try await ledger.record(
                            [purchase], account: "account\(number % 50)", policy: .first, now: LedgerFixture.now)
                        #expect(decisions == ["o\(number % 50)": .granted])
                        _ = ledger.access(originalTransactionID: "o\(number % 50)", account: nil)
                        if number % 10 == 0 {
                            _ = try await ledger.apply(
                                notificationID: "n\(number)", type: "TEST", revoke: [], restore: [], now: LedgerFixture.now)
                        }
                    }
                }
                try await group.waitForAll()
            }
            var total = 0
            for original in 0..<50 {
                total += try await ledger.purchases(originalTransactionID: "o\(original)").count
                #expect(ledger.access(originalTransactionID: "o\(original)", account: "account\(original)") == .allowed)
            }
            #expect(total == count)
            #expect(ledger.indexedCount == 50)
        }
    }
}

@Suite struct LedgerUpdatedTimeTests {
    /// `updated_ms` of a transaction, read behind the ledger's back.
    static func updated(_ target: LedgerFixture.Target, _ transactionID: String) async throws -> String? {
        let sql = "SELECT updated_ms FROM transactions WHERE transaction_id = '\(transactionID)'"
        if let path = target.path {
            let database = try SQLiteDatabase(path: path)
            defer { database.close() }
            return try database.query(sql).first?.first?.integer.map(String.init)
        }
        return try await RawPostgresSession(target).query(sql).first?.first ?? nil
    }

    @Test(arguments: LedgerBackend.allCases)
    func aRowChangesOnlyWhenItsDataDoes(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, target in
            let purchase = LedgerFixture.purchase("u", expiresInDays: 30)
            _ = try await ledger.record([purchase], account: nil, policy: .transfer, now: LedgerFixture.now)
            let first = try await Self.updated(target, "u")
            _ = try await ledger.record([purchase], account: nil, policy: .transfer, now: LedgerFixture.day(1))
            #expect(try await Self.updated(target, "u") == first)
            _ = try await ledger.record([LedgerFixture.purchase("u", expiresInDays: 60)], account: nil, policy: .transfer,
                                        now: LedgerFixture.day(2))
            #expect(try await Self.updated(target, "u") == String(LedgerTime.milliseconds(LedgerFixture.day(2))))
        }
    }
}
