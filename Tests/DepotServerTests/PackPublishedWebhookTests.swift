import ArgumentParsing
import DepotClient
import DepotCore
import DepotTestSupport
import Foundation
import Ledger
import Testing
import DepotServer

/// `pack.published` (spec app-store-server-api §8) raised by a real server when a pack's live version changes,
/// and only then.
@Suite struct PackPublishedWebhookTests {
    static func start(_ receiver: WebhookReceiver, deliveryRecord: Toggle) async throws -> TestDepot {
        try await TestDepot.start { configuration in
            configuration.webhookURL = receiver.url
            configuration.webhookSecret = WebhookDispatcherTests.secret
            configuration.deliveryRecord = deliveryRecord
            configuration.accessLog = .off
        }
    }

    /// The packs announced so far, in arrival order, each once.
    static func published(_ receiver: WebhookReceiver) -> [String] {
        var seen: Set<String> = []
        return receiver.deliveries.compactMap(\.event).filter { $0.type == "pack.published" && seen.insert($0.id).inserted }
            .compactMap(\.data.pack)
    }

    /// The versions announced so far (`pack version`), in arrival order, each once.
    static func publishedVersions(_ receiver: WebhookReceiver) -> [String] {
        var seen: Set<String> = []
        return receiver.deliveries.compactMap(\.event).filter { $0.type == "pack.published" && seen.insert($0.id).inserted }
            .map { "\($0.data.pack ?? "-") \($0.data.version ?? 0)" }
    }

    /// A version made live while no server ran (a `depot publish` meanwhile) is announced when the server starts
    /// again; what was announced before is not announced again, and packs never announced stay quiet.
    @Test func aVersionMadeLiveWhileTheServerWasDownIsAnnouncedAtStart() async throws {
        let receiver = try WebhookReceiver()
        let first = try await Self.start(receiver, deliveryRecord: .on)
        _ = try await OffPool.run { try PackUpdateTests.publish(first, files: ["a.bin": ContentChunkerFixture.bytes(20_000, seed: 8)]) }
        #expect(await receiver.wait { _ in Self.publishedVersions(receiver) == ["world 1"] }, "\(Self.publishedVersions(receiver))")
        let (configuration, tree) = (first.app.configuration, first.tree)
        await first.stop()
        // Published while the server is down: the publisher alone, as `depot publish` does.
        try await OffPool.run {
            let source = "src-down"
            tree.write(source + "/a.bin", ContentChunkerFixture.bytes(20_000, seed: 9))
            let publisher = Publisher(paths: configuration.paths)
            _ = try publisher.publish(PublishRequest(pack: "world", productID: "com.example.depot.world", type: .nonConsumable,
                                                     title: "world", chunking: .content, chunkSize: 8192, stage: false,
                                                     sources: [tree.path + "/" + source]))
        }
        let second = try await TestDepot.start(tree: tree) { $0 = configuration }
        #expect(await receiver.wait { _ in Self.publishedVersions(receiver) == ["world 1", "world 2"] },
                "\(Self.publishedVersions(receiver))")
        let ledger = try #require(second.app.ledger)
        for pack in ["level2", "level3"] {
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "pack:\(pack)").isEmpty, "\(pack)")
        }
        // A third start announces nothing more (once it has compared the live versions with the ledger's).
        await second.stop()
        let third = try await TestDepot.start(tree: tree) { $0 = configuration }
        let thirdLedger = try #require(third.app.ledger)
        await third.app.records?.liveVersionsReconciled()
        #expect(await WebhookDispatcherTests.poll(timeout: .seconds(30)) {
            try await thirdLedger.pendingOutboxCount(queue: .webhook) == 0
        })
        #expect(try await thirdLedger.outboxItems(queue: .webhook, orderingKey: "pack:world").count == 2)
        #expect(Self.publishedVersions(receiver) == ["world 1", "world 2"])
        await third.stop()
        await receiver.down()
    }

    /// With the delivery record off, the first catalog swap after start announced every live pack (what was live
    /// at start was only noted when recording). Only the pack that changed is announced, with either setting.
    @Test(arguments: [Toggle.off, Toggle.on])
    func aSwapAnnouncesOnlyThePackWhoseLiveVersionChanged(deliveryRecord: Toggle) async throws {
        let receiver = try WebhookReceiver()
        let depot = try await Self.start(receiver, deliveryRecord: deliveryRecord)
        let ledger = try #require(depot.app.ledger)
        // A swap that changes nothing, then one that makes a new pack live.
        depot.app.reloadCatalog()
        _ = try await OffPool.run { try PackUpdateTests.publish(depot, files: ["a.bin": ContentChunkerFixture.bytes(20_000, seed: 7)]) }
        #expect(await receiver.wait { _ in Self.published(receiver) == ["world"] }, "\(Self.published(receiver))")
        for pack in ["level2", "level3"] {
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "pack:\(pack)").isEmpty, "\(pack)")
        }
        #expect(Self.published(receiver) == ["world"])
        await depot.stop()
        await receiver.down()
    }
}
