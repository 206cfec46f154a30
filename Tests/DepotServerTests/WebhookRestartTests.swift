import AppStoreSimulator
import DepotClient
import DepotTestSupport
import DepotWire
import Foundation
import Testing

/// The webhook queue is durable (spec app-store-server-api §8): events a real `depot serve` queued while the
/// receiver refused them are delivered after the server was killed with SIGKILL and started again.
@Suite struct WebhookRestartTests {
    @Test func eventsQueuedBeforeASIGKILLAreDeliveredAfterTheRestart() async throws {
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-365 * 86_400), validUntil: now.addingTimeInterval(365 * 86_400))
        let signer = TransactionSigner(pki: pki)
        let receiver = try WebhookReceiver()
        receiver.answer(500)
        let tree = TemporaryDirectory("depot-webhook-kill")
        let treePath = tree.path
        try await OffPool.run { try TestDepot.copySample(into: treePath) }
        tree.write("root.pem", pki.rootPEM)
        let instance = try await DepotInstance.start("depot", arguments: [
            "--host", "127.0.0.1", "--loops", "1", "--catalog", treePath + "/catalog", "--content", treePath + "/content",
            "--data", treePath + "/var", "--token-secret", "test-secret-test-secret-test-secret-0123",
            "--apple-root-certs", treePath + "/root.pem", "--access-log", "off",
            "--webhook-url", receiver.url.absoluteString, "--webhook-secret", WebhookDispatcherTests.secret,
        ], directory: treePath)

        let transactions = (0..<3).map { _ in PurchaseFixture.transaction() }
        for transaction in transactions {
            let jws = try signer.signedTransaction(transaction)
            let bought = try await ConsumptionAnswerRestartTests.post(instance, WirePath.receipts.pattern,
                                                                      "{\"transactions\": [\"\(jws)\"]}")
            #expect(bought.status == 200, "\(bought.summary)")
        }
        // Queued and tried (refused), then the server dies.
        #expect(await receiver.wait(timeout: .seconds(60)) { $0.count >= 3 })
        await instance.kill()
        receiver.answer(200)
        try await instance.restart()
        // Only the POSTs answered 200 count: those refused before the kill were recorded too.
        let delivered = await receiver.wait { deliveries in
            let accepted = deliveries.filter { $0.status == 200 }
            return transactions.allSatisfy { WebhookDispatcherTests.types(accepted, purchase: $0.originalTransactionId).contains("purchase.granted") }
        }
        #expect(delivered, "log:\n\(instance.log.suffix(2000))")
        for delivery in receiver.deliveries {
            #expect(WebhookSignature.verify(body: delivery.body, header: delivery.signature, secret: WebhookDispatcherTests.secret))
        }
        await instance.stop()
        await receiver.down()
    }
}
