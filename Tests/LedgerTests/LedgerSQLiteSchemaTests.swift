import Foundation
import Testing
import Ledger

@Suite struct LedgerSQLiteSchemaTests {
    @Test func openCreatesParentDirectoryAndAppliesEveryMigration() async throws {
        try await LedgerFixture.withLedger(.sqlite) { (ledger: Ledger, target: LedgerFixture.Target) async throws in
            #expect(FileManager.default.fileExists(atPath: target.path!))
            #expect(try await ledger.pragma("user_version") == String(SQLiteLedgerSchema.currentVersion))
            for table in ["transactions", "account_bindings", "revocations", "processed_notifications", "ledger_settings"] {
                #expect(try await ledger.pragma("table_info(\(table))") != nil, "missing table \(table)")
            }
        }
    }

    @Test func walSynchronousFullForeignKeysAndBusyTimeoutAreSet() async throws {
        try await LedgerFixture.withLedger(.sqlite) { (ledger: Ledger, _: LedgerFixture.Target) async throws in
            #expect(try await ledger.pragma("journal_mode") == "wal")
            #expect(try await ledger.pragma("synchronous") == "2") // 2 = FULL
            #expect(try await ledger.pragma("foreign_keys") == "1")
            #expect(try await ledger.pragma("busy_timeout") == "5000")
        }
    }

    @Test func reopeningKeepsDataAndDoesNotRerunMigrations() async throws {
        try await LedgerFixture.withPath { path in
            let first = try await Ledger.open(at: path)
            _ = try await first.record([LedgerFixture.purchase("t1")], account: "alice", policy: .first, now: LedgerFixture.now)
            await first.close()

            let second = try await Ledger.open(at: path)
            #expect(try await second.pragma("user_version") == String(SQLiteLedgerSchema.currentVersion))
            #expect(try await second.purchases(originalTransactionID: "t1") == [LedgerFixture.purchase("t1")])
            // The index is rebuilt from the file: bob is not the owner.
            #expect(second.access(originalTransactionID: "t1", account: "bob") == .transferred)
            #expect(second.access(originalTransactionID: "t1", account: "alice") == .allowed)
            await second.close()
        }
    }

    @Test func fileFromANewerProgramIsRefused() async throws {
        try await LedgerFixture.withPath { path in
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let raw = try SQLiteDatabase(path: path)
            try raw.execute("PRAGMA user_version = \(SQLiteLedgerSchema.currentVersion + 5)")
            raw.close()
            await #expect(throws: LedgerError.migrationFailed(
                version: SQLiteLedgerSchema.currentVersion + 5,
                message: "the file is at schema version \(SQLiteLedgerSchema.currentVersion + 5), newer than this program's \(SQLiteLedgerSchema.currentVersion)")
            ) {
                _ = try await Ledger.open(at: path)
            }
        }
    }

    @Test func migrationFailureRollsBackAndReportsTheVersion() async throws {
        try await LedgerFixture.withPath { path in
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            // A stray table with the name migration 1 creates makes it fail half-way.
            let raw = try SQLiteDatabase(path: path)
            try raw.execute("CREATE TABLE account_bindings (x)")
            raw.close()
            do {
                _ = try await Ledger.open(at: path)
                Issue.record("open should fail")
            } catch {
                guard case .migrationFailed(let version, _)? = error as? LedgerError else { Issue.record("\(error)"); return }
                #expect(version == 1)
            }
            let check = try SQLiteDatabase(path: path)
            #expect(try check.query("PRAGMA user_version").first?.first == .integer(0))
            // The part of migration 1 before the failure was rolled back too.
            #expect(try check.query("SELECT name FROM sqlite_master WHERE name = 'transactions'").isEmpty)
            check.close()
        }
    }

    @Test func unopenablePathThrowsOpenFailed() async throws {
        try await LedgerFixture.withPath { path in
            // The parent "directory" is a regular file.
            let parent = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(
                atPath: (parent as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: parent, contents: Data("x".utf8))
            await #expect {
                _ = try await Ledger.open(at: path)
            } throws: { error in
                guard case .openFailed = error as? LedgerError else { return false }
                return true
            }
        }
    }
}
