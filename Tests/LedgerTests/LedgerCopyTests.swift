import Foundation
import Testing
import Ledger

/// `Ledger.copy` (SQLite → PostgreSQL) and `Ledger.backup` (SQLite online backup).
@Suite struct LedgerCopyTests {
    /// A SQLite ledger with a bit of everything: bindings under every policy, a refund, a restore, a
    /// subscription, a notification, and a token key.
    static func fill(_ ledger: Ledger) async throws {
        _ = try await ledger.record([LedgerFixture.purchase("first")], account: "alice", policy: .first, now: LedgerFixture.now)
        _ = try await ledger.record([LedgerFixture.purchase("shared")], account: "alice", policy: .shared, now: LedgerFixture.now)
        _ = try await ledger.record([LedgerFixture.purchase("shared")], account: "bob", policy: .shared, now: LedgerFixture.now)
        _ = try await ledger.record([LedgerFixture.purchase("moved")], account: "alice", policy: .transfer, now: LedgerFixture.now)
        _ = try await ledger.record([LedgerFixture.purchase("moved")], account: "carol", policy: .transfer, now: LedgerFixture.now)
        _ = try await ledger.record(
            [LedgerFixture.purchase("s1", original: "sub", daysAgo: 30, expiresInDays: 0, source: .jws),
             LedgerFixture.purchase("s2", original: "sub", daysAgo: 0, expiresInDays: 30, source: .jws),
             LedgerFixture.purchase("refunded"), LedgerFixture.purchase("restored")],
            account: nil, policy: .transfer, now: LedgerFixture.now)
        _ = try await ledger.apply(notificationID: "n1", type: "REFUND",
                                   revoke: [LedgerFixture.revocation("refunded"), LedgerFixture.revocation("restored")],
                                   restore: [], now: LedgerFixture.now)
        _ = try await ledger.apply(notificationID: "n2", type: "REFUND_REVERSED", revoke: [], restore: ["restored"],
                                   now: LedgerFixture.day(1))
        _ = try await ledger.tokenKey { Array(repeating: 7, count: 32) }
    }

    static let originals = ["first", "shared", "moved", "sub", "refunded", "restored", "never"]
    static let accounts: [String?] = [nil, "alice", "bob", "carol", "dave"]

    static func answers(_ ledger: Ledger) async throws -> [String] {
        var lines: [String] = []
        for original in originals {
            for account in accounts {
                lines.append("\(original)/\(account ?? "-"): \(ledger.access(originalTransactionID: original, account: account))")
            }
            lines.append("\(original): \(try await ledger.purchases(originalTransactionID: original))")
        }
        return lines
    }

    @Test func copyMovesEverythingAndRunningItAgainAddsNothing() async throws {
        try await LedgerFixture.withTarget(.sqlite) { source in
            let sqlite = try await source.open()
            try await Self.fill(sqlite)
            let expected = try await Self.answers(sqlite)
            try await LedgerFixture.withTarget(.postgres) { target in
                // An instance already running on the empty database follows the copy through its feed.
                let running = try await target.open()
                let report = try await Ledger.copy(from: source.location, to: target.location, dataDirectory: source.dataDirectory)
                #expect(report.transactions == 7)
                #expect(report.bindings == 4)
                #expect(report.revocations == 2)
                #expect(report.notifications == 2)
                #expect(report.settings == 1)

                let copied = try await target.open()
                #expect(try await Self.answers(copied) == expected)
                #expect(try await copied.tokenKey { [] } == Array(repeating: 7, count: 32))
                let followed = await LedgerFixture.waitUntil(timeout: .seconds(1)) {
                    running.access(originalTransactionID: "refunded", account: nil) == .revoked
                        && running.access(originalTransactionID: "moved", account: "alice") == .transferred
                }
                #expect(followed != nil)

                // Life goes on in PostgreSQL; the SQLite file keeps serving too (a server may still use it).
                _ = try await copied.record([LedgerFixture.purchase("moved")], account: "dave", policy: .transfer, now: LedgerFixture.day(2))
                _ = try await sqlite.record([LedgerFixture.purchase("late")], account: "erin", policy: .first, now: LedgerFixture.day(2))
                let again = try await Ledger.copy(from: source.location, to: target.location, dataDirectory: source.dataDirectory)
                #expect(again.transactions == 1) // only "late"
                #expect(again.bindings == 1)     // erin on "late"; carol is not brought back onto "moved"
                #expect(again.revocations == 0 && again.notifications == 0 && again.settings == 0)
                let third = try await Ledger.copy(from: source.location, to: target.location, dataDirectory: source.dataDirectory)
                #expect(third.total == 0)
                let moved = await LedgerFixture.waitUntil(timeout: .seconds(1)) {
                    copied.access(originalTransactionID: "moved", account: "dave") == .allowed
                        && copied.access(originalTransactionID: "moved", account: "carol") == .transferred
                        && copied.access(originalTransactionID: "late", account: "erin") == .allowed
                }
                #expect(moved != nil)
                await running.close()
                await copied.close()
            }
            await sqlite.close()
        }
    }

    @Test func copyRefusesADatabaseThatHoldsOtherPurchases() async throws {
        try await LedgerFixture.withTarget(.sqlite) { source in
            let sqlite = try await source.open()
            try await Self.fill(sqlite)
            await sqlite.close()
            try await LedgerFixture.withLedger(.postgres) { other, target in
                _ = try await other.record([LedgerFixture.purchase("elsewhere")], account: "zed", policy: .first, now: LedgerFixture.now)
                await #expect {
                    _ = try await Ledger.copy(from: source.location, to: target.location, dataDirectory: source.dataDirectory)
                } throws: { error in
                    guard case .writeFailed(let message) = error as? LedgerError else { return false }
                    return message.contains("not copied from SQLite")
                }
                #expect(try await other.purchases(originalTransactionID: "first") == [])
            }
        }
    }

    @Test func copyNeedsAnExistingSQLiteSourceAndAPostgreSQLTarget() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            await #expect(throws: LedgerError.self) {
                _ = try await Ledger.copy(from: .sqlite(path: "/nonexistent/ledger.sqlite"), to: target.location, dataDirectory: "/tmp")
            }
            #expect(!FileManager.default.fileExists(atPath: "/nonexistent/ledger.sqlite"))
            await #expect(throws: LedgerError.self) {
                _ = try await Ledger.copy(from: target.location, to: target.location, dataDirectory: "/tmp")
            }
            await #expect(throws: LedgerError.self) {
                _ = try await Ledger.copy(from: .sqlite(path: nil), to: .sqlite(path: "/tmp/x"), dataDirectory: "/tmp")
            }
        }
    }

    @Test func backupWhileTheLedgerIsWrittenIsConsistentAndReplacesTheFile() async throws {
        try await LedgerFixture.withTarget(.sqlite) { source in
            let ledger = try await source.open()
            try await Self.fill(ledger)
            let destination = source.dataDirectory + "/backup.sqlite"
            try Data("an older backup".utf8).write(to: URL(fileURLWithPath: destination))
            // Writes keep coming while the backup runs.
            let written = Locked(0)
            let writer = Task {
                for number in 0..<200 {
                    _ = try await ledger.record([LedgerFixture.purchase("w\(number)")], account: "alice", policy: .first,
                                                now: LedgerFixture.now)
                    written.withLock { $0 += 1 }
                }
            }
            // The backup starts after the first 20 (a saturated machine has needed more than 10 s for them).
            let started = await LedgerFixture.waitUntil(timeout: .seconds(120)) { written.withLock { $0 } >= 20 }
            try #require(started, "20 writes before the backup")
            try await Ledger.backup(source.location, dataDirectory: source.dataDirectory, to: destination)
            try await writer.value
            let copy = try await Ledger.open(at: destination)
            #expect(try await Self.answers(copy) == Self.answers(ledger))
            // Some of the writes made during the backup, each whole (purchase and binding together).
            var copied = 0
            for number in 0..<200 {
                let rows = try await copy.purchases(originalTransactionID: "w\(number)")
                if rows.isEmpty { continue }
                copied += 1
                #expect(rows == [LedgerFixture.purchase("w\(number)")])
                #expect(copy.access(originalTransactionID: "w\(number)", account: "bob") == .transferred)
            }
            #expect(copied >= 20)
            print("backup during 200 writes holds \(copied) of them")
            await copy.close()
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: source.dataDirectory).filter { $0.contains(".tmp-") }
            #expect(leftovers.isEmpty)
            await ledger.close()
        }
    }

    @Test func backupRefusesItsOwnSourceAndPostgreSQL() async throws {
        try await LedgerFixture.withTarget(.sqlite) { source in
            let ledger = try await source.open()
            await ledger.close()
            await #expect(throws: LedgerError.self) {
                try await Ledger.backup(source.location, dataDirectory: source.dataDirectory, to: source.path!)
            }
            let postgres = try LedgerLocation(parsing: "postgres://depot@localhost/ledger")
            await #expect(throws: LedgerError.self) {
                try await Ledger.backup(postgres, dataDirectory: source.dataDirectory, to: source.dataDirectory + "/b")
            }
            await #expect(throws: LedgerError.self) {
                try await Ledger.backup(.sqlite(path: source.dataDirectory + "/missing.sqlite"), dataDirectory: "", to: source.dataDirectory + "/b")
            }
        }
    }
}
