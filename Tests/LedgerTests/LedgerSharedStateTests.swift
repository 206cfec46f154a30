import Foundation
import Testing
import Ledger

/// The token key and the publish lock: state that instances sharing a ledger share.
@Suite struct LedgerSharedStateTests {
    static func randomKey() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    @Test(arguments: LedgerBackend.allCases)
    func theTokenKeyIsCreatedOnceAndReadBackEverywhere(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let first = try await target.open()
            let second = try await target.open()
            for _ in 0..<5 {
                let generated = Locked(0)
                async let one = first.tokenKey { generated.withLock { $0 += 1 }; return Self.randomKey() }
                async let two = second.tokenKey { generated.withLock { $0 += 1 }; return Self.randomKey() }
                let keys = try await [one, two]
                #expect(keys[0] == keys[1])
                #expect(keys[0].count == 32)
                #expect(generated.withLock { $0 } <= 2)
            }
            let stored = try await first.tokenKey { Issue.record("a stored key must not be generated again"); return [] }
            await first.close()
            await second.close()
            let reopened = try await target.open()
            #expect(try await reopened.tokenKey { [] } == stored)
            await reopened.close()
        }
    }

    @Test func aRaceOfFreshInstancesYieldsOneKey() async throws {
        for _ in 0..<5 {
            try await LedgerFixture.withTarget(.postgres) { target in
                let a = try await target.open(poolSize: 1)
                let b = try await target.open(poolSize: 1)
                async let one = a.tokenKey(generate: Self.randomKey)
                async let two = b.tokenKey(generate: Self.randomKey)
                let keys = try await [one, two]
                #expect(keys[0] == keys[1])
                await a.close()
                await b.close()
            }
        }
    }

    @Test func sqliteHasNoDatabasePublishLock() async throws {
        try await LedgerFixture.withLedger(.sqlite) { (ledger: Ledger, _: LedgerFixture.Target) async throws in
            #expect(try await ledger.publishLock(pack: "level1") == nil)
            #expect(try await ledger.withPublishLock(pack: "level1") { 42 } == 42)
        }
    }

    @Test func publishesOfOnePackAreSerializedAcrossInstances() async throws {
        try await PostgresInstancesTests.withTwoInstances { a, b, _ in
            let held = try #require(try await a.publishLock(pack: "level1"))
            #expect(await held.isHeld)
            let events = Locked<[String]>([])
            // B waits for the same pack; another pack is not held up.
            let waiting = Task {
                try await b.withPublishLock(pack: "level1") { events.withLock { $0.append("b got level1") } }
            }
            try await b.withPublishLock(pack: "level2") { events.withLock { $0.append("b got level2") } }
            try await Task.sleep(for: .milliseconds(300))
            #expect(events.withLock { $0 } == ["b got level2"])
            events.withLock { $0.append("a releases") }
            await held.release()
            #expect(await !held.isHeld)
            try await waiting.value
            #expect(events.withLock { $0 } == ["b got level2", "a releases", "b got level1"])
            await held.release() // twice is harmless
        }
    }

    @Test func aPublishLockKnowsWhenItsSessionIsGone() async throws {
        try await PostgresInstancesTests.withTwoInstances { a, b, target in
            let held = try #require(try await a.publishLock(pack: "p"))
            let raw = try await RawPostgresSession(target)
            #expect(try await raw.terminate(application: "depot-ledger-publish-lock") == 1)
            #expect(await !held.isHeld)
            // The server released it with the session: another instance gets it at once.
            try await b.withPublishLock(pack: "p") {}
            await held.release()
        }
    }
}
