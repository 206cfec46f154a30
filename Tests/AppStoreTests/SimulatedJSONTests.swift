import AppStoreSimulator
import DepotCore
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

    /// The store's transaction payload, written by this writer, as a signed transaction carries it.
    @Test func aTransactionPayloadReadsBackWithItsFields() async throws {
        let store = try SimulatedAppStore(bundleID: "com.example.depot")
        let date = Date(timeIntervalSince1970: 1_795_946_400.123)
        let purchase = store.serverAPI.purchase("com.example.depot.monthly", type: .autoRenewable, environment: .sandbox,
                                                purchaseDate: date, expiresDate: date.addingTimeInterval(3600))
        let jws = try #require(try store.serverAPI.signedTransaction(purchase.transactionID))
        let payload = try #require(Base64URL.decode(jws.split(separator: ".")[1]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        #expect((object["purchaseDate"] as? NSNumber)?.int64Value == 1_795_946_400_123)
        #expect((object["expiresDate"] as? NSNumber)?.int64Value == 1_795_950_000_123)
        #expect(object["type"] as? String == "Auto-Renewable Subscription")
        #expect(object["environment"] as? String == "Sandbox")
        #expect(object["bundleId"] as? String == "com.example.depot")
        #expect(object["webOrderLineItemId"] as? String != nil && object["subscriptionGroupIdentifier"] as? String == "group-1")
        #expect(object["revocationDate"] == nil && object["appAccountToken"] == nil)
        #expect(object.count == 17)
        await store.stop()
    }
}
