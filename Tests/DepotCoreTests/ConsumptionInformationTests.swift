import DepotCore
import Testing

struct ConsumptionInformationTests {
    @Test func bodyHasTheSpecOrderAndLeavesOutAbsentFields() {
        let delivered = ConsumptionInformation(deliveryStatus: .delivered, consumptionPercentage: 100_000, refundPreference: .decline)
        #expect(delivered.json == "{\"customerConsented\": true, \"sampleContentProvided\": false, \"deliveryStatus\": \"DELIVERED\", "
            + "\"consumptionPercentage\": 100000, \"refundPreference\": \"DECLINE\"}")
        let partial = ConsumptionInformation(deliveryStatus: .undeliveredOther, consumptionPercentage: 25_000)
        #expect(partial.json == "{\"customerConsented\": true, \"sampleContentProvided\": false, \"deliveryStatus\": \"UNDELIVERED_OTHER\", "
            + "\"consumptionPercentage\": 25000}")
        #expect(ConsumptionInformation(deliveryStatus: .undeliveredOther, refundPreference: .grantFull).json
            == "{\"customerConsented\": true, \"sampleContentProvided\": false, \"deliveryStatus\": \"UNDELIVERED_OTHER\", \"refundPreference\": \"GRANT_FULL\"}")
    }
}
