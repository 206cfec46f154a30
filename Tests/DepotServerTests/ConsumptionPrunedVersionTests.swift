import DepotCore
import DepotTestSupport
import DepotWire
import Foundation
import Ledger
import Testing
import DepotServer

/// A refund request about a pack version whose directory was pruned (spec app-store-server-api §7): the delivery
/// record keeps the version's chunks and bytes, so a purchase that received all of version 1 is still answered
/// `DELIVERED` after version 2 went live and version 1 was pruned.
@Suite struct ConsumptionPrunedVersionTests {
    @Test func aFullyDownloadedVersionPrunedSinceIsStillDelivered() async throws {
        try await PackFixture.with { fixture in
            let purchase = "7200000000000001"
            let token = fixture.token(transaction: purchase)
            for file in fixture.manifest.files {
                let url = fixture.fileURL(file.path)
                let answer = try await OffPool.run { try fixture.request(url, credential: .bearer(token)) }
                #expect(answer.status == 200, "\(file.path): \(answer.summary)")
            }
            let chunks = fixture.manifest.files.reduce(0) { $0 + $1.chunks.count }
            let recorded = try await DeliveryRecordTests.records(fixture, purchase: purchase) { $0.reduce(0) { $0 + $1.chunks.count } == chunks }
            #expect(recorded.reduce(0) { $0 + $1.chunks.count } == chunks)

            // Version 2 goes live and version 1 is pruned.
            var files = fixture.contents
            files["range.bin"] = PackFixture.bytes(1200, seed: 99)
            try PackFixture.publish(files, into: fixture.depot, at: PackFixture.publishTime + 100)
            let paths = DepotPaths(catalogDirectory: fixture.depot.catalogDirectory, contentDirectory: fixture.depot.contentDirectory,
                                   dataDirectory: fixture.depot.dataDirectory)
            let pruned = try Publisher(paths: paths, now: { PackFixture.publishTime + 200 }).prune(keep: 1, pack: PackFixture.pack)
            #expect(pruned.map(\.name) == ["\(PackFixture.pack)/1"])
            #expect(fixture.depot.app.reloadCatalog())
            let snapshot = fixture.depot.app.store.current
            let entry = try #require(snapshot?.content.packs[PackFixture.pack])
            #expect(entry.current == 2)
            #expect(entry.versions[1] == nil, "version 1 is still on disk")

            let ledger = try #require(fixture.depot.app.ledger)
            let request = ConsumptionRequest(notificationUUID: "pruned-1", transactionId: purchase, originalTransactionId: purchase,
                                             productId: PackFixture.product, environment: "Production",
                                             signedDate: Int64(Date().timeIntervalSince1970 * 1000))
            let answer = ConsumptionAnswers.answer(for: request, deliveries: try await ledger.deliveries(originalTransactionID: purchase),
                                                   snapshot: snapshot)
            #expect(answer.deliveryStatus == .delivered, "\(answer.json)")
            #expect(answer.consumptionPercentage == 100_000)
            #expect(answer.refundPreference == .decline)
        }
    }
}
