import DepotCore
import Testing

@Suite struct ConsumptionRulesTests {
    typealias Delivery = ConsumptionRules.Delivery

    @Test func everythingSentIsDeliveredAndDeclined() {
        let answer = ConsumptionRules.answer(for: Delivery(deliveredChunks: 4, totalChunks: 4, deliveredBytes: 1000, totalBytes: 1000))
        #expect(answer.json == #"{"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED", "consumptionPercentage": 100000, "refundPreference": "DECLINE"}"#)
    }

    @Test func partOfThePackIsUndeliveredWithItsShareAndNoPreference() {
        let answer = ConsumptionRules.answer(for: Delivery(deliveredChunks: 2, totalChunks: 4, deliveredBytes: 1_048_576, totalBytes: 1_311_646))
        #expect(answer.deliveryStatus == .undeliveredOther)
        #expect(answer.consumptionPercentage == 79_943)
        #expect(answer.refundPreference == nil)
        // Just short of everything never rounds up to 100000.
        #expect(Delivery(deliveredChunks: 9, totalChunks: 10, deliveredBytes: 999_999_999, totalBytes: 1_000_000_000).milliunits == 99_999)
    }

    @Test func nothingSentIsAFullRefund() {
        let answer = ConsumptionRules.answer(for: Delivery(deliveredChunks: 0, totalChunks: 3, deliveredBytes: 0, totalBytes: 300))
        #expect(answer.json == #"{"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "UNDELIVERED_OTHER", "consumptionPercentage": 0, "refundPreference": "GRANT_FULL"}"#)
    }

    @Test func aProductWithoutAPackClaimsNothing() {
        #expect(ConsumptionRules.answer(for: nil).json
                == #"{"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "UNDELIVERED_OTHER"}"#)
    }

    @Test func theMostCompleteVersionDecides() {
        let half = Delivery(deliveredChunks: 1, totalChunks: 2, deliveredBytes: 50, totalBytes: 100)
        let all = Delivery(deliveredChunks: 3, totalChunks: 3, deliveredBytes: 30, totalBytes: 30)
        #expect(ConsumptionRules.decisive([1: all, 2: half]) == all)
        #expect(ConsumptionRules.decisive([1: half, 2: Delivery(deliveredChunks: 0, totalChunks: 2, deliveredBytes: 0, totalBytes: 100)]) == half)
        #expect(ConsumptionRules.decisive([:]) == nil)
    }
}
