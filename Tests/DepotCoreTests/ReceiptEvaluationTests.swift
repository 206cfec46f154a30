import Foundation
import Testing
import DepotCore

@Suite struct ReceiptEvaluationTests {
    static let now = ReceiptFixture.collectionDay

    static func purchase(_ id: String, expires: TimeInterval? = nil, cancelled: Bool = false) -> ReceiptPurchase {
        ReceiptPurchase(
            productID: "com.example.depot.level2", transactionID: id, originalTransactionID: id,
            purchaseDate: now.addingTimeInterval(-86_400), expiresDate: expires.map { now.addingTimeInterval($0) },
            cancellationDate: cancelled ? now.addingTimeInterval(-3_600) : nil)
    }

    static func response(status: Int = 0, bundleID: String? = "com.example.depot", _ purchases: [ReceiptPurchase]) -> VerifyReceiptResponse {
        VerifyReceiptResponse(status: status, environment: "Production", hasReceipt: true, bundleID: bundleID, inApp: purchases)
    }

    @Test(arguments: [
        (purchase("one-time"), ReceiptVerdict.State.active),
        (purchase("future", expires: 60), .active),
        (purchase("past", expires: -60), .expired),
        (purchase("at-now", expires: 0), .expired),
        (purchase("refunded", cancelled: true), .revoked),
        (purchase("refunded-and-expired", expires: -60, cancelled: true), .revoked),
        (purchase("refunded-subscription", expires: 60, cancelled: true), .revoked),
    ])
    func stateOfAPurchase(_ purchase: ReceiptPurchase, _ state: ReceiptVerdict.State) throws {
        #expect(ReceiptEvaluation.state(of: purchase, now: Self.now) == state)
        let evaluation = try ReceiptEvaluation(response: Self.response([purchase]), bundleID: "com.example.depot", now: Self.now)
        #expect(evaluation.verdicts == [ReceiptVerdict(purchase: purchase, state: state)])
        #expect(evaluation.status == 0)
        #expect(evaluation.environment == "Production")
    }

    @Test(arguments: [
        (purchase("one-time"), ReceiptVerdict.State.expired),
        (purchase("future", expires: 60), .expired),
        (purchase("refunded", cancelled: true), .revoked),
    ])
    func status21006MarksEverythingNotRevokedExpired(_ purchase: ReceiptPurchase, _ state: ReceiptVerdict.State) throws {
        let evaluation = try ReceiptEvaluation(
            response: Self.response(status: 21006, [purchase]), bundleID: "com.example.depot", now: Self.now)
        #expect(evaluation.verdicts.map(\.state) == [state])
    }

    @Test func verdictsFollowTheDeduplicatedPurchases() throws {
        var response = Self.response([Self.purchase("a", expires: -60), Self.purchase("b")])
        response.latestReceiptInfo = [Self.purchase("a", expires: 3_600)]
        let evaluation = try ReceiptEvaluation(response: response, bundleID: "com.example.depot", now: Self.now)
        #expect(evaluation.verdicts.map(\.purchase.transactionID) == ["a", "b"])
        #expect(evaluation.verdicts.map(\.state) == [.active, .active])
    }

    @Test(arguments: [nil, "com.example.other", "COM.EXAMPLE.DEPOT", ""] as [String?])
    func bundleMismatchIsAnError(_ found: String?) {
        #expect(throws: ReceiptEvaluationError.bundleMismatch(expected: "com.example.depot", found: found)) {
            try ReceiptEvaluation(response: Self.response(bundleID: found, [Self.purchase("1")]), bundleID: "com.example.depot", now: Self.now)
        }
    }

    @Test func responseWithoutReceiptIsAnError() {
        #expect(throws: ReceiptEvaluationError.missingReceipt) {
            try ReceiptEvaluation(response: VerifyReceiptResponse(status: 0), bundleID: "com.example.depot", now: Self.now)
        }
    }

    @Test(arguments: [21002, 21003, 21004, 21005, 21007, 21008, 21010, 21100, 21999, 1])
    func onlyValidStatusesAreEvaluated(_ status: Int) {
        #expect(throws: ReceiptEvaluationError.statusNotValid(status)) {
            try ReceiptEvaluation(response: Self.response(status: status, [Self.purchase("1")]), bundleID: "com.example.depot", now: Self.now)
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(ReceiptEvaluationError.bundleMismatch(expected: "a", found: "b").description == "the receipt is for bundle 'b', not 'a'")
        #expect(ReceiptEvaluationError.bundleMismatch(expected: "a", found: nil).description == "the receipt is for bundle (none), not 'a'")
    }
}
