import AppStore
import AppStoreSimulator
import DepotCrypto
import Foundation
import Testing

/// Transaction IDs out of real legacy receipts and the simulator's minted ones (spec §3 step 1).
struct LegacyReceiptReaderTests {
    /// Each real receipt and the IDs the vector README lists for it (any one opens the history).
    static let realReceipts: [(String, Set<String>)] = [
        ("real-receipts/xcode-app-receipt-legacy", ["2000000909538865"]),
        ("real-receipts/itunes-iap-legacy-transaction-receipt", ["1000000056161764"]),
        ("real-receipts/receipt-production", ["340001196262039", "340001237736590", "340001264290434", "340001311555626"]),
        ("real-receipts/receipt-sandbox-g5", ["2000001092134138", "2000001092148094"]),
        ("real-receipts/receipt-sandbox-legacy", ["1000000603177571"]),
        ("apple-library/xcode/xcode-app-receipt-with-transaction", ["0"]),
        ("apple-library/mock_signed_data/legacyTransaction", ["33993399"]),
    ]

    @Test(arguments: realReceipts)
    func realReceiptYieldsOneOfItsTransactionIDs(file: String, ids: Set<String>) throws {
        let result = LegacyReceiptReader.transactionID(fromBase64: try Fixtures.text(file))
        guard case .found(let id) = result else {
            Issue.record("\(file): \(result)")
            return
        }
        #expect(ids.contains(id), "\(file) gave \(id)")
    }

    @Test func legacyReceiptGivesItsOnlyTransaction() throws {
        #expect(LegacyReceiptReader.transactionID(fromBase64: try Fixtures.text("real-receipts/xcode-app-receipt-legacy"))
            == .found("2000000909538865"))
        #expect(LegacyReceiptReader.transactionID(fromBase64: try Fixtures.text("real-receipts/itunes-iap-legacy-transaction-receipt"))
            == .found("1000000056161764"))
    }

    @Test func receiptWithoutPurchasesHasNone() throws {
        #expect(LegacyReceiptReader.transactionID(fromBase64: try Fixtures.text("apple-library/xcode/xcode-app-receipt-empty")) == .noPurchase)
    }

    @Test func base64WithLineBreaksIsAccepted() throws {
        let text = try Fixtures.text("real-receipts/xcode-app-receipt-legacy")
        let wrapped = stride(from: 0, to: text.count, by: 76).map { offset -> String in
            let start = text.index(text.startIndex, offsetBy: offset)
            return String(text[start..<(text.index(start, offsetBy: 76, limitedBy: text.endIndex) ?? text.endIndex)])
        }.joined(separator: "\r\n")
        #expect(LegacyReceiptReader.transactionID(fromBase64: wrapped) == .found("2000000909538865"))
    }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static let notReceipts: [(String, String)] = [
        ("empty", ""),
        ("not base64", "not*base64!"),
        ("base64 of text", base64("hello, world")),
        ("a JSON receipt of the verifyReceipt simulator", base64("{\"simulated-receipt\":\"x\"}")),
        ("a property list without purchase-info", base64("{ \"signature\" = \"AAAA\"; }")),
        ("purchase-info that is not base64", base64("{ \"purchase-info\" = \"***\"; }")),
        ("purchase-info without transaction-id", base64("{ \"purchase-info\" = \"\(base64("{ \"bid\" = \"x\"; }"))\"; }")),
        ("DER that is not PKCS#7", Data([0x30, 0x03, 0x02, 0x01, 0x01]).base64EncodedString()),
        ("a nested list", base64("{ \"purchase-info\" = ( \"a\" ); }")),
    ]

    @Test(arguments: notReceipts)
    func anythingElseIsNotAReceipt(name: String, receipt: String) {
        guard case .notAReceipt(let reason) = LegacyReceiptReader.transactionID(fromBase64: receipt) else {
            Issue.record("\(name) was read as a receipt")
            return
        }
        #expect(!reason.isEmpty && (receipt.isEmpty || !reason.contains(receipt)))
    }

    @Test func deeplyNestedPropertyListIsRefusedQuickly() {
        let hostile = Self.base64(String(repeating: "(", count: 200_000))
        #expect(LegacyReceiptReader.transactionID(fromBase64: hostile) != .noPurchase)
    }

    @Test func mintedReceiptsAreRead() async throws {
        let store = try SimulatedAppStore(bundleID: "com.example.depot")
        let api = store.serverAPI
        let first = api.purchase("com.example.depot.level2", customer: "ada")
        api.purchase("com.example.depot.level3", customer: "ada")
        let sandbox = api.purchase("com.example.depot.level2", customer: "bob", environment: .sandbox)
        #expect(LegacyReceiptReader.transactionID(fromBase64: try api.appReceipt(for: "ada")) == .found(first.transactionID))
        #expect(LegacyReceiptReader.transactionID(fromBase64: try api.appReceipt(for: "bob", environment: .sandbox))
            == .found(sandbox.transactionID))
        #expect(LegacyReceiptReader.transactionID(fromBase64: try api.appReceipt(transactionIDs: [])) == .noPurchase)
        #expect(LegacyReceiptReader.transactionID(fromBase64: try #require(try api.transactionReceipt(sandbox.transactionID)))
            == .found(sandbox.transactionID))
        await store.stop()
    }

    /// Every PKCS#7 receipt reads to the same content through the fast DER reading as through `d2i_PKCS7`; the
    /// real App Store receipts (strict DER) take the fast one, Xcode's BER receipts the libcrypto parse.
    @Test func appReceiptContentIsTheSameEitherWay() throws {
        let files = ["real-receipts/xcode-app-receipt-legacy", "real-receipts/receipt-production", "real-receipts/receipt-sandbox-g5",
                     "real-receipts/receipt-sandbox-legacy", "apple-library/xcode/xcode-app-receipt-with-transaction",
                     "apple-library/xcode/xcode-app-receipt-empty"]
        for file in files {
            let text = try Fixtures.text(file).filter { !$0.isWhitespace }
            let der = Array(try #require(Data(base64Encoded: text), "\(file)"))
            let parsed = try PKCS7SignedData.parsedContent(of: der)
            #expect(try PKCS7SignedData.content(of: der) == parsed, "\(file)")
            #expect(!parsed.isEmpty, "\(file)")
        }
    }

    /// Whitespace anywhere in the base64 is skipped: ASCII (tabs, spaces, form feeds, line breaks) byte by byte,
    /// and other Unicode whitespace (an em space, a line separator) too, as `Character.isWhitespace` says.
    @Test func whitespaceInsideTheBase64IsSkipped() throws {
        let text = try Fixtures.text("real-receipts/xcode-app-receipt-legacy").filter { !$0.isWhitespace }
        let cut = text.index(text.startIndex, offsetBy: 100)
        for gap in [" ", "\t", "\u{0B}", "\u{0C}", "\n ", "\r\n", "\u{2003}", "\u{2028}"] {
            let spaced = gap + String(text[..<cut]) + gap + String(text[cut...]) + gap
            #expect(LegacyReceiptReader.transactionID(fromBase64: spaced) == .found("2000000909538865"), "gap \(Array(gap.unicodeScalars))")
        }
        #expect(LegacyReceiptReader.transactionID(fromBase64: String(text[..<cut]) + "\u{00A0}*" + String(text[cut...])) == .notAReceipt(reason: "the receipt is not base64"))
    }

    /// The simulator's receipts carry their dates as RFC 3339 UTC text with whole seconds (type 12: creation).
    @Test func mintedReceiptDatesAreRFC3339() async throws {
        let instant = Date(timeIntervalSince1970: 1_796_154_480.75)  // 2026-12-01T19:48:00.75Z
        let store = try SimulatedAppStore(bundleID: "com.example.depot", now: { instant })
        let receipt = try store.serverAPI.appReceipt(transactionIDs: [])
        let records = try ASN1RecordSet.parse(try PKCS7SignedData.content(of: Array(try #require(Data(base64Encoded: receipt)))))
        let created = try #require(records.first { $0.type == 12 })
        #expect(ASN1RecordSet.string(fromDER: created.value) == "2026-12-01T19:48:00Z")
        await store.stop()
    }
}
