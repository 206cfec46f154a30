import AppStoreSimulator
import DepotCore
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// `POST /v1/notifications/appstore` (spec §4.5) and its effect on download tokens (spec §4.3).
@Suite struct NotificationAppStoreTests {
    /// Buys `transaction` through `/v1/receipts` and returns its download token (checked to work).
    static func buy(_ transaction: TransactionSigner.Transaction, in fixture: PurchaseFixture) async throws -> String {
        let response = try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)])
        #expect(response.status == 200, "\(response.summary)")
        let token = try #require(response.token)
        #expect(try await fixture.packStatus("level2", token: token).status == 307)
        return token
    }

    static func revoked(_ transaction: TransactionSigner.Transaction) -> TransactionSigner.Transaction {
        var copy = transaction
        copy.revocationDate = PurchaseFixture.wholeSeconds(Date())
        copy.revocationReason = 0
        copy.signedDate = copy.revocationDate!
        return copy
    }

    /// A REFUND or REVOKE cuts the token off at once; REFUND_REVERSED gives access back; replaying a
    /// notification already processed changes nothing.
    @Test(arguments: [TransactionSigner.NotificationType.refund, .revoke])
    func revocationCutsTheTokenOffAndIsIdempotent(_ type: TransactionSigner.NotificationType) async throws {
        try await PurchaseFixture.run { fixture in
            let transaction = PurchaseFixture.transaction()
            let token = try await Self.buy(transaction, in: fixture)

            let revocation = try fixture.signer.signedNotification(type, transaction: Self.revoked(transaction), signedDate: Date())
            let answer = try await fixture.notify(signedPayload: revocation)
            #expect(answer.status == 200, "\(answer.summary)")
            #expect(answer.body.isEmpty)
            #expect(answer.header("Content-Length") == "0")

            let refused = try await fixture.packStatus("level2", token: token)
            #expect(refused.status == 403, "\(refused.summary)")
            #expect(refused.errorCode == "revoked")
            // The file URL too, not only the manifest.
            #expect(try await fixture.get("/v1/packs/level2/1/files/README.txt", token: token).status == 403)
            // Presenting the purchase again does not bring it back.
            let again = try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)])
            #expect(again.status == 200)
            #expect(again.entitlements.isEmpty)
            #expect(again.rejections == [Rejection(product: PurchaseFixture.level2, reason: "revoked")])

            // The same notification again: acknowledged, still revoked.
            #expect(try await fixture.notify(signedPayload: revocation).status == 200)
            #expect(try await fixture.packStatus("level2", token: token).status == 403)

            let reversal = try fixture.signer.signedNotification(.refundReversed, transaction: transaction, signedDate: Date())
            #expect(try await fixture.notify(signedPayload: reversal).status == 200)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)

            // Replaying the revocation (Apple retries) must not revoke again.
            let replay = try await fixture.notify(signedPayload: revocation)
            #expect(replay.status == 200, "\(replay.summary)")
            #expect(replay.body.isEmpty)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
        }
    }

    /// A revocation that arrives before the purchase is ever presented still counts.
    @Test func refundBeforeThePurchaseIsSeen() async throws {
        try await PurchaseFixture.run { fixture in
            let transaction = PurchaseFixture.transaction()
            let refund = try fixture.signer.signedNotification(.refund, transaction: Self.revoked(transaction), signedDate: Date())
            #expect(try await fixture.notify(signedPayload: refund).status == 200)
            let response = try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)])
            #expect(response.status == 200)
            #expect(response.entitlements.isEmpty)
            #expect(response.rejections == [Rejection(product: PurchaseFixture.level2, reason: "revoked")])
        }
    }

    @Test func testNotificationIsAcknowledged() async throws {
        try await PurchaseFixture.run { fixture in
            let test = try fixture.signer.signedNotification(.test, transaction: nil, bundleId: PurchaseFixture.bundleID,
                                                            environment: "Production", signedDate: Date())
            let answer = try await fixture.notify(signedPayload: test)
            #expect(answer.status == 200, "\(answer.summary)")
            #expect(answer.body.isEmpty)
        }
    }

    @Test func notificationForAnotherBundleIsWrongBundle() async throws {
        try await PurchaseFixture.run { fixture in
            let transaction = PurchaseFixture.transaction(bundleId: "com.example.other")
            let refund = try fixture.signer.signedNotification(.refund, transaction: Self.revoked(transaction), signedDate: Date())
            let answer = try await fixture.notify(signedPayload: refund)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(answer.errorCode == "wrong_bundle")
        }
    }

    /// A bad signature — on the notification or on the transaction inside it — is a `401`, and revokes nothing.
    @Test func badSignatureIsUnauthorized() async throws {
        try await PurchaseFixture.run { fixture in
            let transaction = PurchaseFixture.transaction()
            let token = try await Self.buy(transaction, in: fixture)
            let refund = try fixture.signer.signedNotification(.refund, transaction: Self.revoked(transaction), signedDate: Date())
            let tampered = try Self.flipNotificationUUIDBit(refund)
            let answer = try await fixture.notify(signedPayload: tampered)
            #expect(answer.status == 401, "\(answer.summary)")

            // Signed by a PKI the server does not trust.
            let stranger = TransactionSigner(pki: try PurchaseTransactionTests.Authority.standard.generate())
            let forged = try stranger.signedNotification(.refund, transaction: Self.revoked(transaction), signedDate: Date())
            #expect(try await fixture.notify(signedPayload: forged).status == 401)

            // A genuine envelope around a tampered transaction.
            let innerTampered = try PurchaseTransactionTests.flipTransactionIDBit(
                try fixture.signer.signedTransaction(Self.revoked(transaction)))
            let envelope = try fixture.signer.sign(payload: [
                "notificationType": "REFUND", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": PurchaseFixture.bundleID, "environment": "Production",
                         "signedTransactionInfo": innerTampered] as [String: Any],
            ])
            #expect(try await fixture.notify(signedPayload: envelope).status == 401)

            #expect(try await fixture.packStatus("level2", token: token).status == 307)
        }
    }

    struct NotANotification: Sendable, CustomTestStringConvertible {
        var name: String
        var body: String
        var testDescription: String { name }
    }

    static let notNotifications: [NotANotification] = [
        NotANotification(name: "not JSON", body: "signedPayload=abc"),
        NotANotification(name: "a JSON array", body: "[]"),
        NotANotification(name: "an unrelated object", body: "{\"hello\": \"world\"}"),
        NotANotification(name: "signedPayload a number", body: "{\"signedPayload\": 42}"),
        NotANotification(name: "signedPayload not a JWS", body: "{\"signedPayload\": \"not-a-jws\"}"),
        NotANotification(name: "notification_type a number", body: "{\"notification_type\": 7, \"password\": \"pw\"}"),
    ]

    /// A verified payload without a bundle ID anywhere is not a notification (400 bad_request), not one for
    /// another app (wrong_bundle).
    @Test func aSignedPayloadWithoutABundleIDIsABadRequest() async throws {
        try await PurchaseFixture.run { fixture in
            let payload = try fixture.signer.sign(payload: [
                "notificationType": "REFUND", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
            ])
            let answer = try await fixture.notify(signedPayload: payload)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(answer.errorCode == "bad_request")
        }
    }

    /// V1: a REFUND whose `unified_receipt` is not an object is not a usable notification (400), not acknowledged.
    @Test(arguments: ["\"x\"", "[]", "5"])
    func v1WithAnUnreadableUnifiedReceiptIsABadRequest(_ unified: String) async throws {
        try await PurchaseFixture.run(appleSecret: "pw") { fixture in
            let body = "{\"notification_type\": \"REFUND\", \"password\": \"pw\", \"unified_receipt\": \(unified)}"
            let answer = try await fixture.post("/v1/notifications/appstore", json: body)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(answer.errorCode == "bad_request")
        }
    }

    @Test(arguments: notNotifications)
    func notANotificationIsABadRequest(_ example: NotANotification) async throws {
        try await PurchaseFixture.run(appleSecret: "pw") { fixture in
            let answer = try await fixture.post("/v1/notifications/appstore", json: example.body)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(answer.errorCode == "bad_request")
        }
    }

    @Test func notificationBodyMustBeJSONMedia() async throws {
        try await PurchaseFixture.run { fixture in
            let answer = try await fixture.post("/v1/notifications/appstore", body: Array("{}".utf8), contentType: "text/plain")
            #expect(answer.status == 415)
        }
    }

    // MARK: - V1

    static func v1Refund(password: String?, transactionID: String, cancelled: Date) -> [String: Any] {
        let ms = { (date: Date) in String(Int64(date.timeIntervalSince1970 * 1000)) }
        var object: [String: Any] = [
            "notification_type": "REFUND", "environment": "PROD", "bid": PurchaseFixture.bundleID,
            "original_transaction_id": transactionID,
            "unified_receipt": [
                "status": 0, "environment": "Production", "latest_receipt": "eyJhIjoxfQ==",
                "latest_receipt_info": [[
                    "product_id": PurchaseFixture.level2, "transaction_id": transactionID,
                    "original_transaction_id": transactionID, "quantity": "1",
                    "purchase_date_ms": ms(cancelled.addingTimeInterval(-86_400)),
                    "cancellation_date_ms": ms(cancelled), "cancellation_reason": "0",
                ]],
            ] as [String: Any],
        ]
        object["password"] = password
        return object
    }

    /// A V1 refund whose cancellation date is a finite number past any real date is a `400`, and the server
    /// goes on serving (it used to trap turning that date into integer milliseconds).
    @Test func v1RefundWithAnAbsurdDateIsABadRequest() async throws {
        try await PurchaseFixture.run(appleSecret: "v1-shared-secret") { fixture in
            var refund = Self.v1Refund(password: "v1-shared-secret", transactionID: "1000000000000042", cancelled: Date())
            var unified = try #require(refund["unified_receipt"] as? [String: Any])
            var info = try #require((unified["latest_receipt_info"] as? [[String: Any]])?.first)
            info["cancellation_date_ms"] = 1e19
            unified["latest_receipt_info"] = [info]
            refund["unified_receipt"] = unified
            let answer = try await fixture.notify(refund)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(try await fixture.get("/products_v1.json").status == 200)
        }
    }

    @Test func v1RefundWithTheSharedSecretRevokes() async throws {
        try await PurchaseFixture.run(appleSecret: "v1-shared-secret") { fixture in
            let purchase = PurchaseFixture.purchase()
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]))
            let token = try #require(bought.token)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)

            let refund = Self.v1Refund(password: "v1-shared-secret", transactionID: purchase.transactionID, cancelled: Date())
            let answer = try await fixture.notify(refund)
            #expect(answer.status == 200, "\(answer.summary)")
            #expect(answer.body.isEmpty)
            let refused = try await fixture.packStatus("level2", token: token)
            #expect(refused.status == 403)
            #expect(refused.errorCode == "revoked")
            // Delivered twice: acknowledged again.
            #expect(try await fixture.notify(refund).status == 200)
            // Restored (V2 REFUND_REVERSED), then the same V1 refund redelivered: recognised and not applied again.
            let reversal = try fixture.signer.signedNotification(
                .refundReversed, transaction: PurchaseFixture.transaction(id: purchase.transactionID), signedDate: Date())
            #expect(try await fixture.notify(signedPayload: reversal).status == 200)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
            #expect(try await fixture.notify(refund).status == 200)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
        }
    }

    /// A verified notification from an environment this server refuses (sandbox while sandbox is off) is
    /// acknowledged, so Apple stops retrying, and changes nothing.
    @Test func aNotificationFromARefusedEnvironmentIsAcknowledgedAndIgnored() async throws {
        try await PurchaseFixture.run(configure: { $0.allowSandbox = false }) { fixture in
            let transaction = PurchaseFixture.transaction()
            let token = try await Self.buy(transaction, in: fixture)
            let refund = try fixture.signer.signedNotification(.refund, transaction: Self.revoked(transaction),
                                                               environment: "Sandbox", signedDate: Date())
            let answer = try await fixture.notify(signedPayload: refund)
            #expect(answer.status == 200, "\(answer.summary)")
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
        }
    }

    @Test(arguments: ["wrong-secret", "", nil] as [String?])
    func v1WithoutTheSharedSecretIsUnauthorized(password: String?) async throws {
        try await PurchaseFixture.run(appleSecret: "v1-shared-secret") { fixture in
            let purchase = PurchaseFixture.purchase()
            let token = try #require(try await fixture.postReceipt(fixture.apple.issueReceipt([purchase])).token)
            let answer = try await fixture.notify(Self.v1Refund(password: password, transactionID: purchase.transactionID,
                                                                cancelled: Date()))
            #expect(answer.status == 401, "\(answer.summary)")
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
        }
    }

    @Test func v1ForAnotherBundleIsWrongBundle() async throws {
        try await PurchaseFixture.run(appleSecret: "v1-shared-secret") { fixture in
            var refund = Self.v1Refund(password: "v1-shared-secret", transactionID: "1", cancelled: Date())
            refund["bid"] = "com.example.other"
            let answer = try await fixture.notify(refund)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(answer.errorCode == "wrong_bundle")
        }
    }

    /// With no shared secret configured, no V1 password can be right.
    @Test func v1WithoutAConfiguredSecretIsUnauthorized() async throws {
        try await PurchaseFixture.run { fixture in
            let answer = try await fixture.notify(Self.v1Refund(password: "", transactionID: "1", cancelled: Date()))
            #expect(answer.status == 401, "\(answer.summary)")
        }
    }

    // MARK: - A real App Store notification

    /// App Store Server Notification V2 TEST for `com.Abilities`, signed by Apple in 2022 with a leaf that
    /// has expired since: accepted with the shipped Apple root because the chain is validated at its
    /// `signedDate`. Provenance: Tests/AppStoreTests/Fixtures/PROVENANCE.md (aporat/store-receipt-validator).
    static func realTestNotification() throws -> String {
        let path = TestDepot.repositoryRoot + "/Tests/AppStoreTests/Fixtures/real-jws/aporat-test-notification.jws"
        let data = try #require(FileManager.default.contents(atPath: path))
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func realAppleTestNotificationIsAccepted() async throws {
        let jws = try Self.realTestNotification()
        try await PurchaseFixture.run(configure: { configuration in
            configuration.bundleID = "com.Abilities"
            configuration.appleRootCertificateFiles = nil  // the shipped Apple Root CA - G3
        }) { fixture in
            let answer = try await fixture.notify(signedPayload: jws)
            #expect(answer.status == 200, "\(answer.summary)")
            #expect(answer.body.isEmpty)
            // Apple retries deliveries: the second one is acknowledged too.
            #expect(try await fixture.notify(signedPayload: jws).status == 200)
        }
    }

    @Test func realAppleTestNotificationForAnotherBundleIsWrongBundle() async throws {
        let jws = try Self.realTestNotification()
        try await PurchaseFixture.run(configure: { $0.appleRootCertificateFiles = nil }) { fixture in
            let answer = try await fixture.notify(signedPayload: jws)
            #expect(answer.status == 400, "\(answer.summary)")
            #expect(answer.errorCode == "wrong_bundle")
        }
    }

    /// Trust comes from the configured roots: the real notification fails against the test PKI's root.
    @Test func realAppleTestNotificationFailsAgainstAnotherRoot() async throws {
        let jws = try Self.realTestNotification()
        try await PurchaseFixture.run(configure: { $0.bundleID = "com.Abilities" }) { fixture in
            let answer = try await fixture.notify(signedPayload: jws)
            #expect(answer.status == 401, "\(answer.summary)")
        }
    }

    /// Flips one bit of the last character of `notificationUUID` (a hex digit stays a valid character).
    static func flipNotificationUUIDBit(_ jws: String) throws -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var payload = try #require(Base64URL.decode(parts[1]))
        let text = String(decoding: payload, as: UTF8.self)
        let key = try #require(text.range(of: "\"notificationUUID\":\""))
        let end = try #require(text[key.upperBound...].firstIndex(of: "\""))
        let offset = text.utf8.distance(from: text.startIndex, to: end) - 1
        payload[offset] ^= 0x01
        return [parts[0], Base64URL.encode(payload), parts[2]].joined(separator: ".")
    }
}
