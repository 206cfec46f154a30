@testable import AppStoreSimulator
import Foundation
import Testing

/// The simulated store's own JSON writer: what it writes is the JSON `JSONSerialization` reads back.
struct SimulatedJSONTests {
    @Test func writesCompactJSONInTheGivenOrder() {
        let document = SimulatedJSON.object([
            .init("b", .integer(-12)), .init("a", .array([.bool(true), .bool(false), .string("x/y")])),
            .init("empty", .object([])), .init("none", .array([])), .init("big", .integer(Int64.max)),
        ])
        #expect(String(decoding: document.bytes, as: UTF8.self)
            == #"{"b":-12,"a":[true,false,"x/y"],"empty":{},"none":[],"big":9223372036854775807}"#)
    }

    @Test(arguments: ["plain", "quote \" and backslash \\", "line\nbreak\ttab\r", "\u{0}\u{1F}\u{7F}", "é 日本 🎉", ""])
    func stringsReadBackExactly(_ text: String) throws {
        let document = SimulatedJSON.object([.init(text, .string(text)), .init("list", .array([.string(text)]))])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(document.bytes)) as? [String: Any])
        #expect(object[text] as? String == text)
        #expect(object["list"] as? [String] == [text])
    }

    @Test func aTransactionPayloadReadsBackWithItsFields() throws {
        let date = Date(timeIntervalSince1970: 1_795_946_400.123)
        let transaction = SimulatedTransaction(
            transactionID: "2000000900000001", originalTransactionID: "2000000900000001", productID: "com.example.depot.monthly",
            type: .autoRenewable, environment: .sandbox, customer: "c", purchaseDate: date, originalPurchaseDate: date,
            expiresDate: date.addingTimeInterval(3600), revocationDate: nil, revocationReason: nil, quantity: 1,
            transactionReason: "PURCHASE", subscriptionGroupIdentifier: "group-1", webOrderLineItemID: "2000000900000002",
            appAccountToken: nil)
        let bytes = transaction.payload(bundleID: "com.example.depot", signedDate: date).bytes
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((object["purchaseDate"] as? NSNumber)?.int64Value == 1_795_946_400_123)
        #expect((object["expiresDate"] as? NSNumber)?.int64Value == 1_795_950_000_123)
        #expect(object["type"] as? String == "Auto-Renewable Subscription")
        #expect(object["environment"] as? String == "Sandbox")
        #expect(object["webOrderLineItemId"] as? String == "2000000900000002")
        #expect(object["revocationDate"] == nil && object["appAccountToken"] == nil)
        #expect(object.count == 17)
    }
}
