import Foundation
import Testing
import DepotCore

/// The real `verifyReceipt` responses from /work/shared/vectors/verify-receipt.
@Suite struct ReceiptVectorTests {
    @Test func autorenewResponse2ReadsThirteenInAppAndEighteenLatest() throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data("itunes-iap-autorenew-response2"))
        #expect(response.status == 0)
        #expect(response.environment == "Sandbox")
        #expect(response.bundleID == "com.example.app")
        #expect(response.inApp.count == 13)
        #expect(response.latestReceiptInfo.count == 18)
        #expect(response.latestReceipt != nil)
        // The 13 in_app transactions are among the 18 latest: 18 distinct purchases.
        let purchases = response.purchases
        #expect(purchases.count == 18)
        #expect(Set(purchases.map(\.transactionID)).count == 18)
        #expect(purchases.allSatisfy { $0.productID == "testproduct" && $0.originalTransactionID == "1000000318012065" })
        #expect(purchases.first == ReceiptPurchase(
            productID: "testproduct", transactionID: "1000000318012065", originalTransactionID: "1000000318012065",
            purchaseDate: ReceiptFixture.ms(1_500_884_004_000), expiresDate: ReceiptFixture.ms(1_500_884_304_000)))
        #expect(purchases.last?.transactionID == "1000000318420598")
        #expect(purchases.last?.expiresDate == ReceiptFixture.ms(1_500_975_210_000))
    }

    @Test func autorenewResponse2OnlyTheLastRenewalIsActiveJustBeforeItExpires() throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data("itunes-iap-autorenew-response2"))
        let evaluation = try ReceiptEvaluation(
            response: response, bundleID: "com.example.app", now: ReceiptFixture.ms(1_500_975_000_000))
        #expect(evaluation.verdicts.filter { $0.state == .active }.map(\.purchase.transactionID) == ["1000000318420598"])
        #expect(evaluation.verdicts.filter { $0.state == .expired }.count == 17)

        let later = try ReceiptEvaluation(response: response, bundleID: "com.example.app", now: ReceiptFixture.collectionDay)
        #expect(later.verdicts.allSatisfy { $0.state == .expired })
        #expect(later.environment == "Sandbox")
    }

    @Test func autorenewResponse3IsIOS6StyleWithMaskedValues() throws {
        // The contributor masked every ID and `latest_receipt_info.expires_date` with '*': that date is
        // unreadable, which is a parse error naming it (not a crash, not a purchase without expiry).
        #expect(throws: ReceiptParseError.invalidField("latest_receipt_info.expires_date", expected: "a date in milliseconds")) {
            try VerifyReceiptResponse(json: ReceiptFixture.data("itunes-iap-autorenew-response3"))
        }
        // Its iOS 6-style `receipt` object is itself the purchase, `expires_date` in milliseconds, `bid`.
        let data = try ReceiptFixture.modified("itunes-iap-autorenew-response3") { $0["latest_receipt_info"] = nil }
        let response = try VerifyReceiptResponse(json: data)
        let masked = "******************************"
        #expect(response.status == 0)
        #expect(response.environment == nil)
        #expect(response.bundleID == masked)
        #expect(response.inApp == [ReceiptPurchase(
            productID: masked, transactionID: masked, originalTransactionID: masked,
            purchaseDate: ReceiptFixture.ms(1_506_524_670_000), expiresDate: ReceiptFixture.ms(1_506_524_970_000))])
        #expect(response.latestReceipt == masked)
    }

    @Test func veniceExpiredIsStatus21006WithLatestExpiredReceiptInfo() throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data("venice-receipt_expired_cancelled"))
        #expect(response.status == 21006)
        #expect(response.bundleID == "com.foo.bar")
        let expected = ReceiptPurchase(
            productID: "com.foo.product1", transactionID: "140000527258824", originalTransactionID: "140000527258824",
            purchaseDate: ReceiptFixture.ms(1_549_781_388_000), expiresDate: ReceiptFixture.ms(1_550_386_188_000))
        #expect(response.inApp == [expected])
        #expect(response.latestExpiredReceiptInfo == [expected])
        #expect(response.purchases == [expected])
        #expect(AppleStatusPolicy.classify(status: response.status, isRetryable: response.isRetryable) == .okSubscriptionExpired)

        // Valid receipt, expired subscription: evaluated, and expired even at a time before its expiry date.
        for now in [ReceiptFixture.collectionDay, ReceiptFixture.ms(1_550_000_000_000)] {
            let evaluation = try ReceiptEvaluation(response: response, bundleID: "com.foo.bar", now: now)
            #expect(evaluation.verdicts == [ReceiptVerdict(purchase: expected, state: .expired)])
        }
    }

    @Test func veniceNotExpiredReadsTheTextualExpiryDate() throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data("venice-receipt_not_expired_cancelled"))
        #expect(response.status == 0)
        #expect(response.environment == "Production")
        #expect(response.bundleID == "com.foo.bar")
        let expected = ReceiptPurchase(
            productID: "com.foo.product1", transactionID: "1000000070107111", originalTransactionID: "1000000061051111",
            // Only `expires_date` ("2014-06-28 14:47:53 Etc/GMT") is given, no `expires_date_ms`.
            purchaseDate: ReceiptFixture.ms(1_401_288_473_000), expiresDate: ReceiptFixture.ms(1_403_966_873_000))
        #expect(response.purchases == [expected])
        #expect(response.latestReceiptInfo.isEmpty)

        let atCreation = try ReceiptEvaluation(response: response, bundleID: "com.foo.bar", now: ReceiptFixture.ms(1_401_924_047_883))
        #expect(atCreation.verdicts.map(\.state) == [.active])
        let now = try ReceiptEvaluation(response: response, bundleID: "com.foo.bar", now: ReceiptFixture.collectionDay)
        #expect(now.verdicts.map(\.state) == [.expired])
    }

    @Test func aporatResponseHasNumbersNotStrings() throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data("aporat-inAppPurchaseResponse"))
        #expect(response.status == 0)
        #expect(response.environment == "Sandbox")
        #expect(response.bundleID == "com.myapp")
        #expect(response.inApp == [
            ReceiptPurchase(productID: "myapp.1", transactionID: "1000000156455961", originalTransactionID: "1000000156455961",
                            purchaseDate: ReceiptFixture.ms(1_432_429_618_000)),
            ReceiptPurchase(productID: "myapp.2", transactionID: "1000000156014803", originalTransactionID: "1000000156014803",
                            purchaseDate: ReceiptFixture.ms(1_432_143_672_000)),
        ])
        #expect(response.latestReceiptInfo.map(\.transactionID) == ["1000000104232856", "1000000093384828"])
        #expect(response.latestReceiptInfo.map(\.originalTransactionID) == ["1000000093384828", "1000000093384828"])
        #expect(response.latestReceiptInfo.first?.expiresDate == ReceiptFixture.ms(1_394_619_485_000))
        #expect(response.purchases.count == 4)

        let evaluation = try ReceiptEvaluation(response: response, bundleID: "com.myapp", now: ReceiptFixture.collectionDay)
        // The two one-time purchases never expire; the two subscription periods ended in 2014.
        #expect(evaluation.verdicts.map(\.state) == [.active, .active, .expired, .expired])
    }

    @Test func aporatInvalidReceiptIs21002() throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data("aporat-inAppPurchaseInvalidReceiptResponse"))
        #expect(response == VerifyReceiptResponse(status: 21002))
        let outcome = AppleStatusPolicy.classify(status: response.status, isRetryable: response.isRetryable)
        #expect(outcome == .retryOnceThenInvalid)
        #expect(outcome.withoutRetry == .invalid)
        #expect(throws: ReceiptEvaluationError.statusNotValid(21002)) {
            try ReceiptEvaluation(response: response, bundleID: "com.myapp", now: ReceiptFixture.collectionDay)
        }
    }

    @Test(arguments: [
        ("itunes-iap-autorenew-response2", "com.example.depot"),
        ("venice-receipt_expired_cancelled", "com.foo.bar.other"),
        ("aporat-inAppPurchaseResponse", "com.MyApp"),
    ])
    func otherBundleIsRejected(_ name: String, _ bundleID: String) throws {
        let response = try VerifyReceiptResponse(json: ReceiptFixture.data(name))
        #expect(throws: ReceiptEvaluationError.bundleMismatch(expected: bundleID, found: response.bundleID)) {
            try ReceiptEvaluation(response: response, bundleID: bundleID, now: ReceiptFixture.collectionDay)
        }
    }
}
