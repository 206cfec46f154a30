import DepotTestSupport
import Foundation
import Testing
import Ledger

/// What only the PostgreSQL backend has: its schema versioning, start-up errors, health, the Unix socket.
@Suite struct PostgresLedgerTests {
    @Test func openCreatesTheSchemaOnceEvenWhenInstancesStartTogether() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let ledgers = try await withThrowingTaskGroup(of: Ledger.self) { group in
                for _ in 0..<4 { group.addTask { try await target.open(poolSize: 1) } }
                return try await group.reduce(into: [Ledger]()) { $0.append($1) }
            }
            #expect(ledgers.count == 4)
            let raw = try await RawPostgresSession(target)
            let versions = try await raw.query("SELECT version FROM ledger_migrations ORDER BY version").compactMap { $0[0] }
            #expect(versions == (1...PostgresLedgerSchema.currentVersion).map(String.init))
            let tables = try await raw.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename").compactMap { $0[0] }
            #expect(tables == ["account_bindings", "delivered_chunks", "delivery_files", "ledger_migrations", "ledger_settings",
                               "live_versions", "notification_sync_windows", "original_transactions", "outbox", "processed_notifications",
                               "revocations", "transactions"])
            for ledger in ledgers {
                #expect(ledger.backend == .postgres)
                await ledger.close()
            }
        }
    }

    @Test func aDatabaseFromANewerProgramIsRefusedNamingBothVersions() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let ledger = try await target.open()
            await ledger.close()
            let newer = PostgresLedgerSchema.currentVersion + 3
            let raw = try await RawPostgresSession(target)
            try await raw.query("INSERT INTO ledger_migrations (version) VALUES ($1::int4)", [.integer(Int64(newer))])
            await #expect(throws: LedgerError.migrationFailed(
                version: newer,
                message: "the database is at schema version \(newer), newer than this program's \(PostgresLedgerSchema.currentVersion)")
            ) {
                _ = try await target.open()
            }
        }
    }

    @Test func aFailingMigrationRollsBackAndKeepsTheVersion() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            guard case .postgres(let location) = target.location else {
                Issue.record("the PostgreSQL fixture handed back \(target.location)")
                return
            }
            let pool = PostgresPool(location: location, size: 1)
            let migrations = PostgresLedgerSchema.migrations + ["CREATE TABLE later_feature (id int); SELECT no_such_function()"]
            do {
                try await PostgresLedgerStorage.migrate(pool, migrations: migrations)
                Issue.record("the migration should fail")
            } catch {
                guard case .migrationFailed(let version, let message)? = error as? LedgerError else { Issue.record("\(error)"); return }
                #expect(version == PostgresLedgerSchema.currentVersion + 1)
                #expect(message.contains("no_such_function"))
            }
            await pool.close()
            let raw = try await RawPostgresSession(target)
            #expect(try await raw.query("SELECT MAX(version) FROM ledger_migrations") == [[String(PostgresLedgerSchema.currentVersion)]])
            #expect(try await raw.query("SELECT to_regclass('later_feature')::text") == [[nil]])
            // The shipped schema still opens.
            let ledger = try await target.open()
            await ledger.close()
        }
    }

    @Test func aWrongPasswordIsOneLineWithoutThePassword() async throws {
        let cluster = try await PostgresCluster.shared()
        let wrong = "not-the-Password-4711"
        let location = try LedgerLocation(parsing: cluster.uri(database: "postgres", password: wrong))
        do {
            _ = try await Ledger.open(location, dataDirectory: "/nonexistent")
            Issue.record("a wrong password must not open")
        } catch {
            guard case .openFailed = error else { Issue.record("\(error)"); return }
            let text = error.description
            #expect(text.contains("password authentication failed"), "\(text)")
            #expect(!text.contains(wrong))
            #expect(!text.contains("\n"))
            #expect(text.hasPrefix("cannot open ledger postgres://depot@127.0.0.1:\(cluster.port)/postgres"))
        }
    }

    @Test func anUnreachableServerOrAMissingDatabaseIsOneLineWithoutThePassword() async throws {
        let refusing = try RefusingPort()
        let secret = "Secret-Of-Mine-99"
        let cluster = try await PostgresCluster.shared()
        for uri in ["postgres://depot:\(secret)@127.0.0.1:\(refusing.port)/ledger",
                    cluster.uri(database: "no_such_database", password: nil)] {
            do {
                _ = try await Ledger.open(try LedgerLocation(parsing: uri), dataDirectory: "/nonexistent")
                Issue.record("\(uri) must not open")
            } catch {
                guard case .openFailed = error else { Issue.record("\(error)"); continue }
                #expect(!error.description.contains(secret))
                #expect(!error.description.contains(cluster.password))
                #expect(!error.description.contains("\n"))
                #expect(error.description.contains("refused") || error.description.contains("does not exist"), "\(error)")
            }
        }
    }

    @Test func theUnixSocketFormOpens() async throws {
        try await LedgerFixture.withTarget(.postgres) { target in
            let cluster = try #require(target.cluster)
            let location = try LedgerLocation(parsing: cluster.socketURI(database: try #require(target.database)))
            let ledger = try await Ledger.open(location, dataDirectory: target.dataDirectory, poolSize: 1)
            _ = try await ledger.record([LedgerFixture.purchase("s")], account: "alice", policy: .first, now: LedgerFixture.now)
            #expect(ledger.access(originalTransactionID: "s", account: "bob") == .transferred)
            await ledger.close()
        }
    }

    @Test func healthIsUpAndConfirmedRecentlyThenDownAfterClose() async throws {
        try await LedgerFixture.withLedger(.postgres) { ledger, _ in
            let health = ledger.health
            #expect(health.up)
            #expect(health.backend == .postgres)
            // The feed confirms the index at least every 200 ms.
            let confirmed = await LedgerFixture.waitUntil(timeout: .seconds(2)) {
                ledger.health.lastConfirmed > health.lastConfirmed
            }
            #expect(confirmed != nil)
            #expect(Date().timeIntervalSince(ledger.health.lastConfirmed) < 1.5)
            #expect(ledger.propagation.resyncs == 1)
            #expect(await ledger.checkWritable())
            await ledger.close()
            #expect(!ledger.health.up)
            #expect(await !ledger.checkWritable())
        }
    }
}

@Suite struct PostgresRepeatedSightingTests {
    @Test func aSightingOfKnownDataTakesNoLockAndWritesNothing() async throws {
        try await LedgerFixture.withLedger(.postgres) { ledger, target in
            let purchase = [LedgerFixture.purchase("seen", expiresInDays: 30)]
            #expect(try await ledger.record(purchase, account: "alice", policy: .first, now: LedgerFixture.now) == ["seen": .granted])
            let raw = try await RawPostgresSession(target)
            let rowVersions = """
                SELECT (SELECT xmin::text || '/' || xmax::text || '/' || updated_ms FROM transactions WHERE transaction_id = 'seen'),
                       (SELECT xmin::text || '/' || xmax::text FROM original_transactions WHERE original_transaction_id = 'seen')
                """
            let before = try await raw.query(rowVersions)
            for (account, policy, decision) in [("alice", AccountPolicy.first, BindingDecision.granted),
                                                ("bob", .first, .boundToOtherAccount), ("alice", .transfer, .granted)] {
                #expect(try await ledger.record(purchase, account: account, policy: policy, now: LedgerFixture.day(1))
                        == ["seen": decision])
            }
            #expect(try await raw.query(rowVersions) == before, "a repeat locked or rewrote a row")
            // New data is written, under the lock.
            let renewed = [LedgerFixture.purchase("seen", expiresInDays: 60)]
            _ = try await ledger.record(renewed, account: "alice", policy: .first, now: LedgerFixture.day(2))
            #expect(try await raw.query(rowVersions) != before)
            #expect(try await ledger.purchases(originalTransactionID: "seen") == renewed)
        }
    }
}
