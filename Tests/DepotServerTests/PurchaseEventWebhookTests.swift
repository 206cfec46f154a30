import AppStoreSimulator
import ArgumentParsing
import DepotClient
import DepotTestSupport
import DepotWire
import Foundation
import Testing
import DepotServer

/// `purchase.granted`, `purchase.revoked` and `purchase.restored` (spec app-store-server-api §8) raised by a
/// real server from the ledger writes that make the changes, and webhooks never slowing `/v1/receipts`.
@Suite struct PurchaseEventWebhookTests {
    static func start(_ receiver: WebhookReceiver) async throws -> PurchaseFixture {
        try await PurchaseFixture.start { configuration in
            configuration.webhookURL = receiver.url
            configuration.webhookSecret = WebhookDispatcherTests.secret
        }
    }

    @Test func aPurchaseItsRefundAndItsReversalArriveInOrderSigned() async throws {
        let receiver = try WebhookReceiver()
        let fixture = try await Self.start(receiver)
        let transaction = PurchaseFixture.transaction()
        let original = transaction.originalTransactionId
        _ = try await NotificationAppStoreTests.buy(transaction, in: fixture)
        // Presented again: no second grant.
        #expect(try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)]).status == 200)
        let refund = try fixture.signer.signedNotification(.refund, transaction: NotificationAppStoreTests.revoked(transaction),
                                                           signedDate: Date())
        #expect(try await fixture.notify(signedPayload: refund).status == 200)
        #expect(try await fixture.notify(signedPayload: refund).status == 200) // redelivered: nothing new
        let reversal = try fixture.signer.signedNotification(.refundReversed, transaction: transaction, signedDate: Date())
        #expect(try await fixture.notify(signedPayload: reversal).status == 200)

        let arrived = await receiver.wait {
            WebhookDispatcherTests.types($0, purchase: original) == ["purchase.granted", "purchase.revoked", "purchase.restored"]
        }
        #expect(arrived, "\(WebhookDispatcherTests.types(receiver.deliveries, purchase: original))")
        for delivery in receiver.deliveries {
            #expect(WebhookSignature.verify(body: delivery.body, header: delivery.signature, secret: WebhookDispatcherTests.secret))
        }
        let events = receiver.deliveries.compactMap(\.event).filter { $0.data.originalTransactionId == original }
        let granted = try #require(events.first { $0.type == "purchase.granted" })
        #expect(granted.data.productId == PurchaseFixture.level2)
        #expect(granted.data.pack == "level2")
        #expect(granted.data.transactionId == transaction.transactionId)
        let revoked = try #require(events.first { $0.type == "purchase.revoked" })
        #expect(revoked.data.by == "apple")
        #expect(revoked.data.reason == "REFUND")
        let restored = try #require(events.first { $0.type == "purchase.restored" })
        #expect(restored.data.by == "apple")
        #expect(restored.data.reason == "REFUND_REVERSED")
        // Nothing beyond the three (each once, whatever the retries).
        try await Task.sleep(for: .seconds(2))
        #expect(Set(receiver.deliveries.compactMap(\.event).filter { $0.data.originalTransactionId == original }.map(\.id)).count == 3)
        await fixture.stop()
        await receiver.down()
    }

    /// A support revoke and restore through the admin API raise `purchase.revoked` and `purchase.restored`
    /// after the grant, signed, once each, as support decisions: `by` `admin`, reason `support`, the purchase's
    /// product and pack, and no transaction (the decision concerns the purchase as a whole).
    @Test func aSupportRevokeAndRestoreThroughTheAdminAPIArriveSignedAsAdminDecisions() async throws {
        let receiver = try WebhookReceiver()
        let fixture = try await PurchaseFixture.start { configuration in
            configuration.webhookURL = receiver.url
            configuration.webhookSecret = WebhookDispatcherTests.secret
            configuration.adminToken = AdminPurchasesTests.adminToken
        }
        do {
            let purchase = PurchaseFixture.purchase()
            let original = purchase.transactionID
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]), account: "sam")
            let token = try #require(bought.token, "\(bought.summary)")
            let revoked = try await AdminPurchasesTests.send(fixture, "POST", WirePath.adminPurchaseRevoke(original: original))
            #expect(revoked.status == 200, "\(revoked.summary)")
            #expect(try await fixture.packStatus("level2", token: token).errorCode == "revoked")
            let restored = try await AdminPurchasesTests.send(fixture, "POST", WirePath.adminPurchaseRestore(original: original))
            #expect(restored.status == 200, "\(restored.summary)")
            #expect(try await fixture.packStatus("level2", token: token).status == 307)

            let arrived = await receiver.wait {
                WebhookDispatcherTests.types($0, purchase: original) == ["purchase.granted", "purchase.revoked", "purchase.restored"]
            }
            #expect(arrived, "\(WebhookDispatcherTests.types(receiver.deliveries, purchase: original))")
            for delivery in receiver.deliveries {
                #expect(WebhookSignature.verify(body: delivery.body, header: delivery.signature, secret: WebhookDispatcherTests.secret))
            }
            let events = receiver.deliveries.compactMap(\.event).filter { $0.data.originalTransactionId == original }
            #expect(events.first { $0.type == "purchase.granted" }?.data.account == "sam")
            for type in ["purchase.revoked", "purchase.restored"] {
                let event = try #require(events.first { $0.type == type }, "\(type)")
                #expect(event.data.by == "admin", "\(type)")
                #expect(event.data.reason == "support", "\(type)")
                #expect(event.data.transactionId == nil, "\(type): \(event.data)")
                #expect(event.data.productId == PurchaseFixture.level2, "\(type)")
                #expect(event.data.pack == "level2", "\(type)")
            }
            // The same decisions again change nothing and raise nothing.
            #expect(try await AdminPurchasesTests.send(fixture, "POST", WirePath.adminPurchaseRestore(original: original)).status == 200)
            try await Task.sleep(for: .seconds(2))
            #expect(Set(receiver.deliveries.compactMap(\.event).filter { $0.data.originalTransactionId == original }.map(\.id)).count == 3)
        } catch {
            await fixture.stop()
            await receiver.down()
            throw error
        }
        await fixture.stop()
        await receiver.down()
    }

    /// The median `/v1/receipts` time with a receiver that answers 500 to everything, each after holding the
    /// request 10 s, against a server without webhooks, measured in alternation in one run: the failing receiver
    /// adds nothing a receipt waits for (a receipt that waited for its webhook would take 10 s).
    @Test func aReceiverAnswering500ForeverDoesNotSlowReceipts() async throws {
        let failing = try WebhookReceiver()
        failing.answer(500)
        failing.hold(.seconds(10))
        let withHooks = try await Self.start(failing)
        let without = try await PurchaseFixture.start()
        var timed: (hooks: [Double], none: [Double]) = ([], [])
        for round in 0..<24 {
            for (index, fixture) in [withHooks, without].enumerated() {
                let jws = try fixture.signer.signedTransaction(PurchaseFixture.transaction())
                let start = ContinuousClock.now
                let answer = try await fixture.postTransactions([jws])
                let elapsed = start.duration(to: .now).components
                let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                #expect(answer.status == 200, "round \(round): \(answer.summary)")
                if index == 0 { timed.hooks.append(seconds) } else { timed.none.append(seconds) }
            }
        }
        // The receiver was tried (and refused) all along.
        #expect(await failing.wait(timeout: .seconds(60)) { $0.count >= 5 })
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let (hooks, none) = (median(timed.hooks), median(timed.none))
        print("receipts: median \(Int(hooks * 1000)) ms with a receiver answering 500, \(Int(none * 1000)) ms without webhooks")
        #expect(hooks < max(none * 3, none + 0.25), "median \(hooks) s with the failing receiver, \(none) s without")
        await withHooks.stop()
        await without.stop()
        await failing.down()
    }
}
