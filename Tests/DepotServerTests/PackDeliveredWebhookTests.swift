import ArgumentParsing
import DepotClient
import DepotTestSupport
import DepotWire
import Foundation
import Ledger
import Testing
import DepotServer

/// `pack.delivered` (spec app-store-server-api §8) raised by a real server: the delivery-record write that gives a
/// purchase the last chunk of a version queues the event in the same ledger transaction, so the record and the
/// event are durable together (a crash after that write cannot lose the event).
@Suite struct PackDeliveredWebhookTests {
    @Test func aCompleteDownloadRaisesPackDeliveredOnceWithTheRecord() async throws {
        let receiver = try WebhookReceiver()
        try await PackFixture.with(configure: { configuration in
            configuration.webhookURL = receiver.url
            configuration.webhookSecret = WebhookDispatcherTests.secret
            configuration.accessLog = .off
        }) { fixture in
            let purchase = "7300000000000001"
            let token = fixture.token(transaction: purchase)
            // Everything but the last file: no event.
            let files = fixture.manifest.files.filter { !$0.chunks.isEmpty }
            for file in files.dropLast() {
                let url = fixture.fileURL(file.path)
                let answer = try await OffPool.run { try fixture.request(url, credential: .bearer(token)) }
                #expect(answer.status == 200, "\(file.path): \(answer.summary)")
            }
            let ledger = try #require(fixture.depot.app.ledger)
            let partial = files.dropLast().reduce(0) { $0 + $1.chunks.count }
            _ = try await DeliveryRecordTests.records(fixture, purchase: purchase) { $0.reduce(0) { $0 + $1.chunks.count } == partial }
            #expect(try await ledger.outboxItems(queue: .webhook, orderingKey: purchase).isEmpty)

            let last = try #require(files.last)
            let lastURL = fixture.fileURL(last.path)
            #expect(try await OffPool.run { try fixture.request(lastURL, credential: .bearer(token)) }.status == 200)
            let total = files.reduce(0) { $0 + $1.chunks.count }
            // The first time the record shows every chunk, the event is in the outbox already (same transaction).
            let complete = try await DeliveryRecordTests.records(fixture, purchase: purchase) { $0.reduce(0) { $0 + $1.chunks.count } == total }
            #expect(complete.reduce(0) { $0 + $1.chunks.count } == total)
            let queued = try await ledger.outboxItems(queue: .webhook, orderingKey: purchase)
            #expect(queued.count == 1, "\(queued.map(\.entry.payload))")
            #expect(await receiver.wait { deliveries in deliveries.contains { $0.event?.type == "pack.delivered" } })
            let event = try #require(receiver.deliveries.compactMap(\.event).first { $0.type == "pack.delivered" })
            #expect(event.data.originalTransactionId == purchase)
            #expect(event.data.productId == PackFixture.product)
            #expect(event.data.pack == PackFixture.pack)
            #expect(event.data.version == 1)
            #expect(event.data.chunks == total)
            #expect(event.data.bytes == files.reduce(0) { $0 + $1.size })
        }
        await receiver.down()
    }
}
