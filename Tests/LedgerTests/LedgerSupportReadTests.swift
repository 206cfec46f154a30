import Foundation
import Testing
import Ledger

/// The reads support gets (`deliverySummary`, `consumptionAnswers`) and the consumption queue's "once per
/// notification".
@Suite struct LedgerSupportReadTests {
    static func request(_ uuid: String, original: String = "1") -> ConsumptionRequest {
        ConsumptionRequest(notificationUUID: uuid, transactionId: original + "9", originalTransactionId: original,
                           productId: "com.example.depot.level2", environment: "Production",
                           signedDate: LedgerTime.milliseconds(LedgerFixture.now))
    }

    @Test(arguments: LedgerBackend.allCases)
    func aConsumptionRequestIsQueuedOnceAndReadBackWithTheAnswerSent(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            #expect(try await ledger.queueConsumptionAnswer(Self.request("u1"), now: LedgerFixture.now))
            // The same notification again (redelivered, or caught up from the history) queues nothing.
            #expect(try await !ledger.queueConsumptionAnswer(Self.request("u1"), now: LedgerFixture.now.addingTimeInterval(5)))
            #expect(try await ledger.queueConsumptionAnswer(Self.request("u2"), now: LedgerFixture.now.addingTimeInterval(1)))
            #expect(try await ledger.queueConsumptionAnswer(Self.request("u3", original: "2"), now: LedgerFixture.now))

            let items = try await ledger.claimOutbox(queue: .consumption, owner: "me", now: LedgerFixture.now.addingTimeInterval(2),
                                                     lease: 30, limit: 10)
            #expect(items.map(\.entry.key) == ["consumption:u1", "consumption:u3"])
            // Tried until 12 hours after the notification's signedDate.
            #expect(items[0].entry.deadline == LedgerFixture.now.addingTimeInterval(12 * 3600))
            #expect(ConsumptionRequest(payload: items[0].entry.payload) == Self.request("u1"))
            let body = #"{"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED", "consumptionPercentage": 100000, "refundPreference": "DECLINE"}"#
            try await ledger.finishOutbox(id: items[0].id, state: .sent, now: LedgerFixture.now.addingTimeInterval(3), outcome: body)

            let answers = try await ledger.consumptionAnswers(originalTransactionID: "1")
            #expect(answers.map(\.request.notificationUUID) == ["u1", "u2"])
            #expect(answers.map(\.state) == [.sent, .pending])
            #expect(answers[0].sent == LedgerConsumptionAnswer.Sent(deliveryStatus: "DELIVERED", consumptionPercentage: 100_000,
                                                                   refundPreference: "DECLINE", customerConsented: true,
                                                                   sampleContentProvided: false))
            #expect(answers[0].attempts == 1)
            #expect(answers[0].finished == LedgerFixture.now.addingTimeInterval(3))
            #expect(answers[1].sent == nil)
            #expect(try await ledger.consumptionAnswers(originalTransactionID: "3").isEmpty)
        }
    }

    @Test(arguments: LedgerBackend.allCases)
    func theDeliverySummaryAddsUpFilesPerPackVersion(_ backend: LedgerBackend) async throws {
        try await LedgerFixture.withLedger(backend) { ledger, _ in
            _ = try await ledger.recordDeliveries([
                LedgerDeliveryTests.span([0..<150]),
                LedgerDeliveryTests.span([0..<250], path: "README.txt", at: 2),
                LedgerDeliveryTests.span([0..<10], at: 4, version: 2),
            ])
            let summary = try await ledger.deliverySummary(originalTransactionID: "1")
            #expect(summary == [
                DeliverySummary(pack: "level2", version: 1, files: 2, chunks: 4, deliveredBytes: 350, sentBytes: 400,
                                firstSent: LedgerFixture.now, lastSent: LedgerFixture.now.addingTimeInterval(2),
                                lastDelivered: LedgerFixture.now.addingTimeInterval(2)),
                DeliverySummary(pack: "level2", version: 2, files: 1, chunks: 0, deliveredBytes: 0, sentBytes: 10,
                                firstSent: LedgerFixture.now.addingTimeInterval(4), lastSent: LedgerFixture.now.addingTimeInterval(4),
                                lastDelivered: nil),
            ])
            #expect(try await ledger.deliverySummary(originalTransactionID: "2").isEmpty)
        }
    }
}
