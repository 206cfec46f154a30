import ArgumentParsing
import DepotClient
import DepotTestSupport
import Foundation
import Ledger
import Testing
@testable import DepotServer

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

    /// With the delivery record off, the first catalog swap after start announced every live pack (what was live
    /// at start was only noted when recording). Only the pack that changed is announced, with either setting.
    @Test(arguments: [Toggle.off, Toggle.on])
    func aSwapAnnouncesOnlyThePackWhoseLiveVersionChanged(deliveryRecord: Toggle) async throws {
        let receiver = try WebhookReceiver()
        let depot = try await Self.start(receiver, deliveryRecord: deliveryRecord)
        let ledger = try #require(depot.app.ledger)
        // A swap that changes nothing, then one that makes a new pack live.
        depot.app.reloadCatalog()
        _ = try await Blocking.run { try PackUpdateTests.publish(depot, files: ["a.bin": ContentChunkerFixture.bytes(20_000, seed: 7)]) }
        #expect(await receiver.wait { _ in Self.published(receiver) == ["world"] }, "\(Self.published(receiver))")
        for pack in ["level2", "level3"] {
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: "pack:\(pack)").isEmpty, "\(pack)")
        }
        #expect(Self.published(receiver) == ["world"])
        await depot.stop()
        await receiver.down()
    }
}
