import DepotTestSupport
import Foundation
import Testing
import Ledger

/// A PostgreSQL server that goes away under a running ledger: its own cluster, since it is killed.
@Suite(.serialized) struct PostgresOutageTests {
    @Test func aCrashDuringAStreamOfPurchasesLosesNoAcknowledgedOneAndTheLedgerReconnectsByItself() async throws {
        let cluster = try await PostgresCluster.start()
        do {
            try await Self.crashDuringStream(cluster)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    static func crashDuringStream(_ cluster: PostgresCluster) async throws {
        let database = try await cluster.createDatabase()
        let location = try LedgerLocation(parsing: cluster.uri(database: database))
        let ledger = try await Ledger.open(location, dataDirectory: "/nonexistent", poolSize: 4)
        let acknowledged = Locked<[Int]>([])
        let failures = Locked<[String]>([])
        let stopping = Locked(false)
        let next = Locked(0)

        let writers = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        while !stopping.withLock({ $0 }) {
                            let number = next.withLock { value -> Int in
                                value += 1
                                return value
                            }
                            do {
                                let decisions = try await ledger.record(
                                    [LedgerFixture.purchase("c\(number)")], account: "account\(number)", policy: .first,
                                    now: LedgerFixture.now)
                                if decisions == ["c\(number)": .granted] { acknowledged.withLock { $0.append(number) } }
                            } catch {
                                failures.withLock { $0.append("\(error)") }
                                try? await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                }
            }
        }
        func waitFor(_ count: Int) async -> Bool {
            await LedgerFixture.waitUntil(timeout: .seconds(120)) { acknowledged.withLock { $0.count } >= count } != nil
        }
        #expect(await waitFor(100))
        #expect(ledger.health.up)

        try await cluster.stop(mode: .immediate)
        let stoppedAt = Date()
        let down = await LedgerFixture.waitUntil(timeout: .seconds(20)) { !ledger.health.up }
        #expect(down != nil, "health stays up with the server gone")
        let beforeRestart = acknowledged.withLock { $0.count }
        try await Task.sleep(for: .milliseconds(500))
        #expect(ledger.health.lastConfirmed <= stoppedAt.addingTimeInterval(0.5))
        #expect(failures.withLock { !$0.isEmpty }, "writes during the outage must fail")
        #expect(await !ledger.checkWritable())

        try await cluster.restart()
        let clock = ContinuousClock()
        let restartedAt = clock.now
        #expect(await waitFor(beforeRestart + 50), "the ledger did not reconnect by itself")
        let recovered = clock.now - restartedAt
        let up = await LedgerFixture.waitUntil(timeout: .seconds(10)) { ledger.health.up }
        #expect(up != nil)
        #expect(ledger.propagation.reconnects >= 1)
        stopping.withLock { $0 = true }
        await writers.value

        let numbers = acknowledged.withLock { $0 }
        let failed = failures.withLock { $0 }
        #expect(failed.allSatisfy { $0.contains("unavailable") || $0.contains("write failed") }, "\(failed.prefix(3))")
        print("crash test: \(numbers.count) purchases acknowledged, \(failed.count) refused during the outage, "
              + "writes again \(recovered) after the restart")
        // Every acknowledged purchase is in the database after crash recovery, with its binding.
        let fresh = try await Ledger.open(location, dataDirectory: "/nonexistent", poolSize: 2)
        for number in numbers {
            let rows = try await fresh.purchases(originalTransactionID: "c\(number)")
            #expect(rows.count == 1, "acknowledged purchase c\(number) lost")
            #expect(fresh.access(originalTransactionID: "c\(number)", account: "someone-else") == .transferred)
        }
        await fresh.close()
        await ledger.close()
    }
}
