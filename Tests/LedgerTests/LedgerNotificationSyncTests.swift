import Foundation
import Testing
import Ledger

/// The notification catch-up windows (app-store-server-api §6) on both backends: one instance holds an
/// environment's window at a time, a completed window moves forward only, a lapsed claim can be taken over.
@Suite struct LedgerNotificationSyncTests {
    static let now = LedgerFixture.now

    @Test(arguments: LedgerBackend.allCases)
    func oneInstanceHoldsAWindowAtATime(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let a = try await target.open()
            let b = try await target.open()
            #expect(try await a.claimNotificationSync(environment: "Production", owner: "a", now: Self.now, lease: 60) == .claimed(syncedThrough: nil))
            #expect(try await b.claimNotificationSync(environment: "Production", owner: "b", now: Self.now, lease: 60)
                    == .held(until: Self.now.addingTimeInterval(60)))
            #expect(try await b.claimNotificationSync(environment: "Sandbox", owner: "b", now: Self.now, lease: 60) == .claimed(syncedThrough: nil),
                    "environments are separate windows")
            let end = Self.now.addingTimeInterval(10)
            #expect(try await a.completeNotificationSync(environment: "Production", owner: "a", through: end))
            #expect(try await a.completeNotificationSync(environment: "Production", owner: "a", through: end), "completing again is harmless")
            #expect(try await b.claimNotificationSync(environment: "Production", owner: "b", now: end, lease: 60) == .claimed(syncedThrough: end))
            // A completion never moves the window back.
            #expect(try await b.completeNotificationSync(environment: "Production", owner: "b", through: Self.now))
            #expect(try await a.claimNotificationSync(environment: "Production", owner: "a", now: end, lease: 60) == .claimed(syncedThrough: end))
            // A failed sync releases its claim and leaves the window.
            try await a.releaseNotificationSync(environment: "Production", owner: "a")
            #expect(try await b.claimNotificationSync(environment: "Production", owner: "b", now: end, lease: 60) == .claimed(syncedThrough: end))
            await a.close()
            await b.close()
            let reopened = try await target.open()
            #expect(try await reopened.claimNotificationSync(environment: "Production", owner: "c", now: end.addingTimeInterval(61), lease: 60)
                    == .claimed(syncedThrough: end), "the window survives a restart; b's claim lapsed")
            await reopened.close()
        }
    }

    /// A claim that lapsed (a crashed instance) is taken over, and the old holder cannot complete it.
    @Test(arguments: LedgerBackend.allCases)
    func aLapsedClaimIsTakenOver(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            #expect(try await ledger.claimNotificationSync(environment: "Production", owner: "a", now: Self.now, lease: 30) == .claimed(syncedThrough: nil))
            let later = Self.now.addingTimeInterval(31)
            #expect(try await ledger.claimNotificationSync(environment: "Production", owner: "b", now: later, lease: 30) == .claimed(syncedThrough: nil))
            #expect(try await ledger.completeNotificationSync(environment: "Production", owner: "a", through: later) == false)
            try await ledger.releaseNotificationSync(environment: "Production", owner: "a")
            #expect(try await ledger.claimNotificationSync(environment: "Production", owner: "c", now: later, lease: 30)
                    == .held(until: later.addingTimeInterval(30)), "a's release does not drop b's claim")
        }
    }

    /// Instances claiming one window at the same moment: exactly one gets it.
    @Test(arguments: LedgerBackend.allCases)
    func concurrentClaimsYieldOneHolder(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            var ledgers: [Ledger] = []
            for _ in 0..<(backend == .postgres ? 4 : 1) { ledgers.append(try await target.open(poolSize: 2)) }
            for round in 0..<5 {
                let environment = "Production-\(round)"
                let claims = try await withThrowingTaskGroup(of: NotificationSyncClaim.self) { group in
                    for index in 0..<8 {
                        let ledger = ledgers[index % ledgers.count]
                        group.addTask { try await ledger.claimNotificationSync(environment: environment, owner: "owner-\(index)", now: Self.now, lease: 60) }
                    }
                    var claims: [NotificationSyncClaim] = []
                    for try await claim in group { claims.append(claim) }
                    return claims
                }
                #expect(claims.filter { $0 == .claimed(syncedThrough: nil) }.count == 1, "\(claims)")
            }
            for ledger in ledgers { await ledger.close() }
        }
    }
}
