import Foundation
import Testing
import Ledger

/// `pack.delivered`, `consumption.sent` and `pack.published` are queued in the ledger transaction that makes the
/// change they announce (review item 8): a change is never committed without its event. A crash between the two
/// cannot happen; the tests show it by making the outbox refuse the insert, which takes the change down with it.
@Suite struct LedgerDurableEventsTests {
    static let totals = VersionTotals(chunks: 3, bytes: 250)

    static func span(_ ranges: [Range<Int64>], original: String = "1") -> DeliverySpan {
        DeliverySpan(originalTransactionID: original, pack: "level2", version: 1, path: "stages.bin", sent: ByteCoverage(ranges),
                     chunks: LedgerDeliveryTests.chunks, sentAt: LedgerFixture.now, versionTotals: totals)
    }

    static func event(_ key: String, order: String) -> OutboxEntry {
        OutboxEntry(queue: .webhook, key: key, orderingKey: order, payload: "{}", created: LedgerFixture.now, deadline: LedgerFixture.day(1))
    }

    /// Makes every insert into `outbox` fail (a raw connection beside the ledger's); `false` puts it back.
    static func refuseOutboxInserts(_ target: LedgerFixture.Target, _ refuse: Bool) async throws {
        switch target.backend {
        case .sqlite:
            let raw = try SQLiteDatabase(path: target.path!)
            try raw.execute(refuse ? "CREATE TRIGGER refuse_outbox BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'outbox refused'); END"
                                   : "DROP TRIGGER refuse_outbox")
            raw.close()
        case .postgres:
            let raw = try await RawPostgresSession(target)
            try await raw.execute(refuse ? """
                CREATE FUNCTION refuse_outbox() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$;
                CREATE TRIGGER refuse_outbox BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION refuse_outbox();
                """ : "DROP TRIGGER refuse_outbox ON outbox; DROP FUNCTION refuse_outbox();")
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func theWriteThatCompletesAVersionQueuesItsEventOrNothingIsWritten(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, target in
            ledger.raiseDeliveryEvents { completion in
                Self.event("delivered:\(completion.originalTransactionID):\(completion.version):\(completion.chunks):\(completion.bytes)",
                           order: completion.originalTransactionID)
            }
            // Two chunks: no event yet.
            _ = try await ledger.recordDeliveries([Self.span([0..<200])])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "1").isEmpty)
            // The write that would complete the version cannot queue its event: it records nothing either.
            try await Self.refuseOutboxInserts(target, true)
            await #expect(throws: LedgerError.self) { _ = try await ledger.recordDeliveries([Self.span([200..<250])]) }
            #expect(try await ledger.deliveries(originalTransactionID: "1").first?.chunks.count == 2)
            try await Self.refuseOutboxInserts(target, false)
            // Once it can, the record and its event are there together, the event once.
            let progress = try await ledger.recordDeliveries([Self.span([200..<250])])
            #expect(progress.map(\.newChunks) == [1])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "1").map(\.entry.key) == ["delivered:1:1:3:250"])
            #expect(try await ledger.recordDeliveries([Self.span([0..<250])]).isEmpty)
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "1").count == 1)
            // A version sent whole in one write, by a span without totals, raises nothing (the totals decide).
            var unknown = Self.span([0..<250], original: "2")
            unknown.versionTotals = nil
            _ = try await ledger.recordDeliveries([unknown])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "2").isEmpty)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func markingAnAnswerSentQueuesItsAnnouncementOrNothingIsMarked(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, target in
            try await ledger.enqueue([LedgerOutboxTests.entry("answer", order: "p1", queue: .consumption)])
            let now = LedgerFixture.now.addingTimeInterval(1)
            let item = try #require(try await ledger.claimOutbox(queue: .consumption, owner: "me", now: now, lease: 30, limit: 1).first)
            try await Self.refuseOutboxInserts(target, true)
            await #expect(throws: LedgerError.self) {
                try await ledger.finishOutbox(id: item.id, state: .sent, now: now, outcome: "{}", enqueue: [Self.event("sent", order: "p1")])
            }
            #expect(try await ledger.outboxItems(queue: .consumption, orderingKey: "p1").map(\.state) == [.pending])
            try await Self.refuseOutboxInserts(target, false)
            try await ledger.finishOutbox(id: item.id, state: .sent, now: now, outcome: "{}", enqueue: [Self.event("sent", order: "p1")])
            #expect(try await ledger.outboxItems(queue: .consumption, orderingKey: "p1").map(\.state) == [.sent])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").map(\.entry.key) == ["sent"])
            // Finishing it again (a late duplicate) queues nothing more.
            try await ledger.finishOutbox(id: item.id, state: .sent, now: now, outcome: "{}", enqueue: [Self.event("sent-again", order: "p1")])
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "p1").map(\.entry.key) == ["sent"])
        }
    }

    /// Live versions: a first start records silently; a change is announced once, in the transaction that records
    /// it; a rollback to a version live before is a new announcement; a change made while no server ran is
    /// announced at the next start; an instance that lags behind the record announces nothing.
    @Test(arguments: LedgerBackend.allCases)
    func liveVersionChangesAreAnnouncedOnceInTheTransactionThatRecordsThem(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withTarget(backend) { target in
            let ledger = try await target.open()
            let announce: LiveVersionEvents = { change in
                Self.event("published:\(change.pack):\(change.version):\(change.announcement)", order: "pack:\(change.pack)")
            }
            func announced(_ pack: String) async throws -> [String] {
                try await ledger.outboxItems(queue: .webhook, orderingKey: "pack:\(pack)").map(\.entry.key)
            }
            let now = LedgerFixture.now
            #expect(try await ledger.reconcileLiveVersions(["level2": 1, "level3": 1], previous: nil, now: now, announce: announce).isEmpty)
            #expect(try await announced("level2").isEmpty)
            // A swap: level2 2 goes live; a new pack appears.
            let swap = try await ledger.reconcileLiveVersions(["level2": 2, "level3": 1, "world": 1], previous: ["level2": 1, "level3": 1],
                                                              now: now, announce: announce)
            #expect(swap == [LiveVersionChange(pack: "level2", version: 2, announcement: 1),
                             LiveVersionChange(pack: "world", version: 1, announcement: 1)])
            // Another instance seeing the same swap announces nothing more.
            let other = try await target.open()
            #expect(try await other.reconcileLiveVersions(["level2": 2, "level3": 1, "world": 1], previous: ["level2": 1, "level3": 1],
                                                          now: now, announce: announce).isEmpty)
            // An instance that knew level2 at another version than the record's (it lagged while the record moved on)
            // announces nothing.
            #expect(try await other.reconcileLiveVersions(["level2": 1, "level3": 1, "world": 1], previous: ["level2": 3, "level3": 1, "world": 1],
                                                          now: now, announce: announce).isEmpty)
            await other.close()
            // A rollback to version 1 is announced again, with its own key.
            #expect(try await ledger.reconcileLiveVersions(["level2": 1, "level3": 1, "world": 1], previous: ["level2": 2, "level3": 1, "world": 1],
                                                           now: now, announce: announce).map(\.announcement) == [2])
            #expect(try await announced("level2") == ["published:level2:2:1", "published:level2:1:2"])
            // A change that cannot queue its announcement is not recorded: the next start announces it.
            try await LedgerDurableEventsTests.refuseOutboxInserts(target, true)
            await #expect(throws: LedgerError.self) {
                try await ledger.reconcileLiveVersions(["level2": 1, "level3": 2, "world": 1], previous: ["level2": 1, "level3": 1, "world": 1],
                                                       now: now, announce: announce)
            }
            try await LedgerDurableEventsTests.refuseOutboxInserts(target, false)
            await ledger.close()
            let restarted = try await target.open()
            let atStart = try await restarted.reconcileLiveVersions(["level2": 1, "level3": 2, "world": 1], previous: nil, now: now, announce: announce)
            #expect(atStart == [LiveVersionChange(pack: "level3", version: 2, announcement: 1)])
            #expect(try await restarted.reconcileLiveVersions(["level2": 1, "level3": 2, "world": 1], previous: nil, now: now, announce: announce).isEmpty)
            await restarted.close()
        }
    }
}
