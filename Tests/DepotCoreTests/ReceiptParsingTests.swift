import Foundation
import Testing
import DepotCore

/// Hand-made `verifyReceipt` bodies for the edges the real vectors do not cover.
@Suite struct ReceiptParsingTests {
    static func body(purchase: String, extra: String = "") -> Data {
        ReceiptFixture.json(#"{"status": 0, "receipt": {"bundle_id": "com.example.depot", "in_app": [\#(purchase)]}\#(extra)}"#)
    }

    static let expected = ReceiptPurchase(
        productID: "com.example.depot.level2", transactionID: "1000000318012065", originalTransactionID: "1000000318012000",
        purchaseDate: ReceiptFixture.ms(1_500_884_004_000), expiresDate: ReceiptFixture.ms(1_500_884_304_000),
        cancellationDate: ReceiptFixture.ms(1_500_884_100_000), quantity: 2)

    @Test(arguments: [
        // strings, as Apple usually sends them
        #"{"product_id": "com.example.depot.level2", "transaction_id": "1000000318012065", "original_transaction_id": "1000000318012000", "purchase_date_ms": "1500884004000", "expires_date_ms": "1500884304000", "cancellation_date_ms": "1500884100000", "quantity": "2"}"#,
        // numbers
        #"{"product_id": "com.example.depot.level2", "transaction_id": 1000000318012065, "original_transaction_id": 1000000318012000, "purchase_date_ms": 1500884004000, "expires_date_ms": 1500884304000, "cancellation_date_ms": 1500884100000, "quantity": 2}"#,
        // numbers written as floats, unknown fields, textual dates only
        #"{"product_id": "com.example.depot.level2", "transaction_id": 1000000318012065.0, "original_transaction_id": "1000000318012000", "purchase_date": "2017-07-24 08:13:24 Etc/GMT", "expires_date": "2017-07-24 08:18:24 Etc/GMT", "cancellation_date": "2017-07-24 08:15:00 Etc/GMT", "quantity": 2.0, "is_trial_period": "false", "future_field": {"x": [1]}}"#,
        // iOS 6 style: `expires_date` in milliseconds
        #"{"product_id": "com.example.depot.level2", "transaction_id": "1000000318012065", "original_transaction_id": "1000000318012000", "purchase_date_ms": "1500884004000", "expires_date": "1500884304000", "cancellation_date_ms": 1500884100000, "quantity": "2"}"#,
    ])
    func stringsAndNumbersReadTheSame(_ purchase: String) throws {
        let response = try VerifyReceiptResponse(json: Self.body(purchase: purchase))
        #expect(response.inApp == [Self.expected])
    }

    @Test func fractionalMillisecondsAndNullsAreAccepted() throws {
        let response = try VerifyReceiptResponse(json: Self.body(purchase:
            #"{"product_id": "p", "transaction_id": "1", "original_transaction_id": "1", "purchase_date_ms": "1697679936049.5", "expires_date_ms": 1697679936049.25, "cancellation_date_ms": null, "quantity": null}"#))
        let purchase = try #require(response.inApp.first)
        #expect(purchase.purchaseDate == Date(timeIntervalSince1970: 1_697_679_936.0495))
        #expect(abs(purchase.expiresDate!.timeIntervalSince1970 - 1_697_679_936.04925) < 1e-6)
        #expect(purchase.cancellationDate == nil)
        #expect(purchase.quantity == 1)
    }

    @Test(arguments: [
        (#""status": "0""#, 0), (#""status": 21007"#, 21007), (#""status": "21100""#, 21100), (#""status": 21006.0"#, 21006),
    ])
    func statusIsANumberOrAString(_ field: String, _ status: Int) throws {
        #expect(try VerifyReceiptResponse(json: ReceiptFixture.json("{\(field)}")).status == status)
    }

    @Test(arguments: [
        ("true", true), ("false", false), ("1", true), ("0", false), (#""true""#, true), (#""false""#, false),
        (#""1""#, true), (#""0""#, false), (#""YES""#, true), (#""no""#, false),
    ] as [(String, Bool?)])
    func isRetryableForms(_ value: String, _ expected: Bool?) throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.json(#"{"status": 21005, "is-retryable": \#(value)}"#))
        #expect(response.isRetryable == expected)
    }

    @Test func isRetryableAbsentOrNullIsUnknown() throws {
        #expect(try VerifyReceiptResponse(json: ReceiptFixture.json(#"{"status": 21005}"#)).isRetryable == nil)
        #expect(try VerifyReceiptResponse(json: ReceiptFixture.json(#"{"status": 21005, "is-retryable": null}"#)).isRetryable == nil)
    }

    @Test func singleObjectsAreListsOfOne() throws {
        let purchase = #"{"product_id": "p", "transaction_id": "7", "original_transaction_id": "7", "purchase_date_ms": "1000"}"#
        let response = try VerifyReceiptResponse(json: ReceiptFixture.json(
            #"{"status": 0, "receipt": {"bid": "b", "in_app": \#(purchase)}, "latest_receipt_info": \#(purchase)}"#))
        #expect(response.bundleID == "b")
        #expect(response.inApp.count == 1)
        #expect(response.latestReceiptInfo.count == 1)
        #expect(response.purchases.count == 1)
    }

    @Test func duplicatesCollapseAndTheLatestListWins() throws {
        func purchase(_ id: String, expires: String) -> String {
            #"{"product_id": "p", "transaction_id": "\#(id)", "original_transaction_id": "1", "purchase_date_ms": "1000", "expires_date_ms": "\#(expires)"}"#
        }
        let response = try VerifyReceiptResponse(json: ReceiptFixture.json(#"""
            {"status": 0,
             "receipt": {"bundle_id": "b", "in_app": [\#(purchase("1", expires: "2000")), \#(purchase("2", expires: "2000"))]},
             "latest_expired_receipt_info": [\#(purchase("2", expires: "2500")), \#(purchase("3", expires: "2500"))],
             "latest_receipt_info": [\#(purchase("3", expires: "3000")), \#(purchase("1", expires: "3000")), \#(purchase("4", expires: "3000"))]}
            """#))
        #expect(response.purchases.map(\.transactionID) == ["1", "2", "3", "4"])
        #expect(response.purchases.map(\.expiresDate) == ["3000", "2500", "3000", "3000"].map { ReceiptFixture.ms(Int64($0)!) })
    }

    @Test func receiptWithoutPurchases() throws {
        let empty = try VerifyReceiptResponse(json: ReceiptFixture.json(#"{"status": 0, "receipt": {"bundle_id": "b", "in_app": []}}"#))
        #expect(empty.hasReceipt && empty.purchases.isEmpty)
        let noList = try VerifyReceiptResponse(json: ReceiptFixture.json(#"{"status": 0, "receipt": {"bundle_id": "b"}}"#))
        #expect(noList.hasReceipt && noList.purchases.isEmpty)
        let noReceipt = try VerifyReceiptResponse(json: ReceiptFixture.json(#"{"status": 21003, "environment": "Production"}"#))
        #expect(noReceipt == VerifyReceiptResponse(status: 21003, environment: "Production"))
    }

    static let complete: [String: String] = [
        "product_id": #""p""#, "transaction_id": #""1""#, "original_transaction_id": #""1""#, "purchase_date_ms": #""1000""#,
    ]

    static func purchase(without missing: String? = nil, setting key: String? = nil, to value: String = "") -> String {
        var fields = complete
        if let missing { fields[missing] = nil }
        if let key { fields[key] = value }
        return "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
    }

    @Test(arguments: ["product_id", "transaction_id", "original_transaction_id", "purchase_date_ms"])
    func missingRequiredPurchaseField(_ field: String) {
        #expect(throws: ReceiptParseError.missingField("receipt.in_app[1].\(field)")) {
            try VerifyReceiptResponse(json: Self.body(purchase: Self.purchase() + ", " + Self.purchase(without: field)))
        }
        #expect(throws: ReceiptParseError.missingField("receipt.in_app[0].\(field)")) {
            try VerifyReceiptResponse(json: Self.body(purchase: Self.purchase(setting: field, to: "null")))
        }
    }

    @Test(arguments: [
        ("product_id", "5", "a string"),
        ("transaction_id", "1.5", "a string or an integer"),
        ("transaction_id", "true", "a string or an integer"),
        ("transaction_id", "1e30", "a string or an integer"),
        ("original_transaction_id", "[]", "a string or an integer"),
        ("purchase_date_ms", #""soon""#, "a date in milliseconds"),
        ("purchase_date_ms", #""1e400""#, "a date in milliseconds"),
        ("purchase_date_ms", "false", "a date in milliseconds"),
        ("expires_date_ms", "{}", "a date in milliseconds"),
        ("expires_date", #""2014-02-30 10:00:00 Etc/GMT""#, "a date in milliseconds"),
        ("cancellation_date_ms", #""""#, "a date in milliseconds"),
        // Finite but past the year 9999: it trapped where the notification's ID turned it into integer ms.
        ("cancellation_date_ms", "1e19", "a date in milliseconds"),
        ("cancellation_date_ms", #""-99999999999999999999""#, "a date in milliseconds"),
        ("purchase_date_ms", "253402300800000", "a date in milliseconds"),
        ("quantity", #""two""#, "an integer"),
        ("quantity", "-1", "a non-negative integer"),
    ])
    func wrongTypeInAPurchaseIsAParseError(_ field: String, _ value: String, _ expected: String) {
        #expect(throws: ReceiptParseError.invalidField("latest_receipt_info[0].\(field)", expected: expected)) {
            try VerifyReceiptResponse(json: ReceiptFixture.json(
                #"{"status": 0, "latest_receipt_info": [\#(Self.purchase(setting: field, to: value))]}"#))
        }
    }

    @Test(arguments: [
        (#"{"status": "ok"}"#, ReceiptParseError.invalidField("status", expected: "an integer")),
        (#"{"status": true}"#, .invalidField("status", expected: "an integer")),
        (#"{"status": 1e20}"#, .invalidField("status", expected: "an integer")),
        (#"{"status": null}"#, .missingField("status")),
        (#"{"environment": "Sandbox"}"#, .missingField("status")),
        (#"{"status": 0, "environment": 1}"#, .invalidField("environment", expected: "a string")),
        (#"{"status": 0, "is-retryable": "maybe"}"#, .invalidField("is-retryable", expected: "a boolean")),
        (#"{"status": 0, "is-retryable": 2}"#, .invalidField("is-retryable", expected: "a boolean")),
        (#"{"status": 0, "receipt": []}"#, .invalidField("receipt", expected: "an object")),
        (#"{"status": 0, "receipt": {"bundle_id": 7}}"#, .invalidField("receipt.bundle_id", expected: "a string")),
        (#"{"status": 0, "receipt": {"in_app": "none"}}"#, .invalidField("receipt.in_app", expected: "an array of objects")),
        (#"{"status": 0, "receipt": {"in_app": [1]}}"#, .invalidField("receipt.in_app[0]", expected: "an object")),
        (#"{"status": 0, "latest_receipt_info": 3}"#, .invalidField("latest_receipt_info", expected: "an array of objects")),
        (#"{"status": 0, "latest_receipt": 3}"#, .invalidField("latest_receipt", expected: "a string")),
        (#"{"status": 0, "receipt": {"bid": "b", "product_id": "p"}}"#, .missingField("receipt.transaction_id")),
        ("", .notJSON),
        ("<html>Service Unavailable</html>", .notJSON),
        (#"{"status": 0"#, .notJSON),
        ("[1, 2]", .notAnObject),
        (#""status""#, .notAnObject),
        ("null", .notAnObject),
    ])
    func malformedBodyIsATypedError(_ body: String, _ error: ReceiptParseError) {
        #expect(throws: error) { try VerifyReceiptResponse(json: ReceiptFixture.json(body)) }
    }

    @Test func invalidUTF8IsNotJSON() {
        #expect(throws: ReceiptParseError.notJSON) { try VerifyReceiptResponse(json: Data([0x7B, 0xFF, 0xFE, 0x7D])) }
    }

    @Test func errorsDescribeTheField() {
        #expect(ReceiptParseError.missingField("status").description == "the verifyReceipt response has no status")
        #expect(ReceiptParseError.invalidField("receipt.in_app[0].quantity", expected: "an integer").description
            == "receipt.in_app[0].quantity in the verifyReceipt response is not an integer")
    }

    @Test(arguments: [
        ("2014-06-28 14:47:53 Etc/GMT", 1_403_966_873 as Int64?),
        ("1970-01-01 00:00:00 Etc/GMT", 0), ("2000-02-29 23:59:59 GMT", 951_868_799), ("2017-07-24 08:13:24 UTC", 1_500_884_004),
        ("1969-12-31 23:59:59 Etc/UTC", -1),
        ("2014-06-28 07:47:53 America/Los_Angeles", nil), ("2014-06-28 14:47:53", nil), ("2014-6-28 14:47:53 Etc/GMT", nil),
        ("2014-06-31 14:47:53 Etc/GMT", nil), ("1900-02-29 00:00:00 Etc/GMT", nil), ("2014-06-28 24:00:00 Etc/GMT", nil),
        ("2014-06-28T14:47:53 Etc/GMT", nil), ("20x4-06-28 14:47:53 Etc/GMT", nil), ("", nil),
    ])
    func textualDates(_ text: String, _ seconds: Int64?) {
        #expect(ReceiptDateText.date(from: text) == seconds.map { Date(timeIntervalSince1970: Double($0)) })
    }
}
