import DepotTestSupport
import Foundation
import Ledger

/// A fresh ledger per test on either backend (a SQLite file in a new directory, or a new database on the
/// process's shared PostgreSQL cluster), and purchase builders.
enum LedgerFixture {
    /// Where a test's ledger lives; `open()` opens another `Ledger` on it (a restart, or a second instance).
    struct Target: Sendable {
        let backend: LedgerBackend
        let location: LedgerLocation
        let dataDirectory: String
        /// The PostgreSQL cluster and database (nil for SQLite).
        let cluster: PostgresCluster?
        let database: String?

        /// Opens a ledger on the target (PostgreSQL: `poolSize` connections, small so parallel tests fit).
        func open(poolSize: Int = 3) async throws -> Ledger {
            try await Ledger.open(location, dataDirectory: dataDirectory, poolSize: poolSize)
        }

        /// The SQLite file (nil for PostgreSQL).
        var path: String? { location.sqlitePath(dataDirectory: dataDirectory) }
    }

    /// Runs `body` with a fresh target of `backend`, removed afterwards.
    static func withTarget(_ backend: LedgerBackend, _ body: (Target) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ledger-tests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDirectory = directory.appendingPathComponent("var").path
        switch backend {
        case .sqlite:
            try await body(Target(backend: .sqlite, location: .sqlite(path: nil), dataDirectory: dataDirectory,
                                  cluster: nil, database: nil))
        case .postgres:
            let cluster = try await PostgresCluster.shared()
            let database = try await cluster.createDatabase()
            let target = Target(backend: .postgres, location: try LedgerLocation(parsing: cluster.uri(database: database)),
                                dataDirectory: dataDirectory, cluster: cluster, database: database)
            do {
                try await body(target)
            } catch {
                try? await cluster.dropDatabase(database)
                throw error
            }
            try await cluster.dropDatabase(database)
        }
    }

    /// Runs `body` with a freshly opened ledger of `backend`, closing it afterwards.
    static func withLedger(_ backend: LedgerBackend, _ body: (Ledger, Target) async throws -> Void) async throws {
        try await withTarget(backend) { target in
            let ledger = try await target.open()
            do {
                try await body(ledger, target)
                await ledger.close()
            } catch {
                await ledger.close()
                throw error
            }
        }
    }

    /// Runs `body` with the path of a SQLite ledger file in a new temporary directory (SQLite-only tests).
    static func withPath(_ body: (String) async throws -> Void) async throws {
        try await withTarget(.sqlite) { target in try await body(target.path!) }
    }

    /// A fixed "now" (2026-11-30T00:00:00Z).
    static let now = Date(timeIntervalSince1970: 1_796_083_200)

    /// `now` moved by `days`.
    static func day(_ days: Double) -> Date { now.addingTimeInterval(days * 86_400) }

    /// A purchase with the given IDs, bought `daysAgo` before `now`.
    static func purchase(
        _ transactionID: String, original: String? = nil, product: String = "com.example.depot.level2",
        daysAgo: Double = 1, expiresInDays: Double? = nil, revokedDaysAgo: Double? = nil,
        source: LedgerPurchase.Source = .receipt
    ) -> LedgerPurchase {
        LedgerPurchase(
            transactionID: transactionID, originalTransactionID: original ?? transactionID, productID: product,
            environment: "Production", purchaseDate: day(-daysAgo), expiresDate: expiresInDays.map { day($0) },
            revocationDate: revokedDaysAgo.map { day(-$0) }, source: source)
    }

    static func revocation(_ transactionID: String, original: String? = nil, daysAgo: Double = 0) -> LedgerRevocation {
        LedgerRevocation(
            transactionID: transactionID, originalTransactionID: original ?? transactionID,
            revokedAt: day(-daysAgo), reason: "REFUND")
    }

    /// Waits until `condition` holds, for at most `timeout`; returns how long it took from this call, or nil when
    /// it never held. The condition is checked every half millisecond on a thread of its own, not from a task:
    /// on a loaded machine other suites' blocking work can hold Swift's cooperative pool for seconds, and a
    /// wait measured from a task then times the test process instead of the ledger.
    static func waitUntil(timeout: Duration = .seconds(5), _ condition: @escaping @Sendable () -> Bool) async -> Duration? {
        let clock = ContinuousClock()
        let start = clock.now
        return await withCheckedContinuation { (continuation: CheckedContinuation<Duration?, Never>) in
            let watcher = Thread {
                while true {
                    let checked = clock.now
                    if condition() { return continuation.resume(returning: clock.now - start) }
                    if checked - start >= timeout { return continuation.resume(returning: nil) }
                    usleep(500)
                }
            }
            watcher.name = "ledger-tests.wait"
            watcher.start()
        }
    }
}
