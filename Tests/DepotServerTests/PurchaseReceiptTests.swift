import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// `POST /v1/receipts` with a legacy app receipt, validated through the simulated `verifyReceipt`
/// (spec §4.2, §4.3, §4.4).
@Suite struct PurchaseReceiptTests {
    /// RFC 3339 in UTC with whole seconds, as the spec's examples.
    static func rfc3339(_ date: Date) -> String { formatter().string(from: date) }
    static func date(_ text: String) -> Date? { formatter().date(from: text) }
    private static func formatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }

    @Test func validPurchaseAnswersTheSpecShapeAndItsTokenDownloadsThePack() async throws {
        try await PurchaseFixture.run { fixture in
            let bought = Date(timeIntervalSince1970: 1_795_946_400)  // 2026-11-29T10:00:00Z
            let purchase = PurchaseFixture.purchase(purchaseDate: bought)
            let receipt = fixture.apple.issueReceipt([purchase])

            let before = Int64(Date().timeIntervalSince1970)
            let response = try await fixture.postReceipt(receipt)
            let after = Int64(Date().timeIntervalSince1970)
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Server") == "depot")
            #expect(response.header("Date") != nil)
            let object = response.object
            #expect(Set(object.keys) == ["environment", "entitlements", "rejected"])
            #expect(object["environment"] as? String == "Production")
            #expect(response.rejected.isEmpty)
            try #require(response.entitlements.count == 1)
            let entitlement = response.entitlements[0]
            #expect(Set(entitlement.keys) == ["productId", "pack", "transactionId", "originalTransactionId", "purchaseDate",
                                              "expiresDate", "token", "tokenExpires", "manifest"])
            #expect(entitlement["productId"] as? String == PurchaseFixture.level2)
            #expect(entitlement["pack"] as? String == "level2")
            #expect(entitlement["transactionId"] as? String == purchase.transactionID)
            #expect(entitlement["originalTransactionId"] as? String == purchase.transactionID)
            #expect(entitlement["purchaseDate"] as? String == "2026-11-29T10:00:00Z")
            #expect(entitlement["expiresDate"] is NSNull)
            #expect(entitlement["manifest"] as? String == "/v1/packs/level2/manifest")
            let tokenExpires = try #require(entitlement["tokenExpires"] as? String)
            let expiry = Int64(try #require(Self.date(tokenExpires)).timeIntervalSince1970)
            #expect(tokenExpires.hasSuffix("Z"))
            #expect((before + 3600)...(after + 3600) ~= expiry)
            let token = try #require(entitlement["token"] as? String)
            #expect(!token.isEmpty)

            // The token opens the pack: redirect, manifest, then a file.
            let redirect = try await fixture.get("/v1/packs/level2/manifest", token: token)
            #expect(redirect.status == 307, "\(redirect.summary)")
            let location = try #require(redirect.header("Location"))
            #expect(location == "/v1/packs/level2/1/manifest")
            let manifest = try await fixture.get(location, token: token)
            #expect(manifest.status == 200, "\(manifest.summary)")
            #expect(manifest.object["pack"] as? String == "level2")
            let files = try #require(manifest.object["files"] as? [[String: Any]])
            let file = try #require(files.first)
            let url = try #require(file["url"] as? String)
            let download = try await fixture.get(url, token: token)
            #expect(download.status == 200, "\(download.summary)")
            #expect(download.body.count == file["size"] as? Int)
            // Without the token the same file is refused.
            #expect(try await fixture.get(url).status == 401)
        }
    }

    @Test func subscriptionEntitlementCarriesItsExpiry() async throws {
        try await PurchaseFixture.run { fixture in
            let expires = PurchaseFixture.wholeSeconds(Date().addingTimeInterval(30 * 86_400))
            let purchase = PurchaseFixture.purchase(PurchaseFixture.seasonPass, expires: expires)
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]))
            #expect(response.status == 200, "\(response.summary)")
            try #require(response.entitlements.count == 1)
            #expect(response.entitlements[0]["pack"] as? String == "level3")
            #expect(response.entitlements[0]["expiresDate"] as? String == Self.rfc3339(expires))
        }
    }

    /// Purchases that validate but grant nothing are listed in `rejected` with their reason; the answer is
    /// still a `200` (spec §4.2).
    @Test(arguments: [
        (PurchaseFixture.coins, "no_pack"),
        (PurchaseFixture.hints, "no_pack"),
        ("com.example.depot.level9", "unknown_product"),
    ])
    func purchaseWithoutAPack(product: String, reason: String) async throws {
        try await PurchaseFixture.run { fixture in
            let purchase = PurchaseFixture.purchase(product)
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]))
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.isEmpty)
            #expect(response.rejections == [Rejection(product: product, reason: reason)])
            #expect(response.rejected.first?["transactionId"] as? String == purchase.transactionID)
        }
    }

    @Test func refundedAndExpiredPurchasesAreRejected() async throws {
        try await PurchaseFixture.run { fixture in
            let refunded = PurchaseFixture.purchase(PurchaseFixture.level2, cancelled: Date().addingTimeInterval(-3_600))
            let lapsed = PurchaseFixture.purchase(PurchaseFixture.seasonPass, expires: Date().addingTimeInterval(-60))
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([refunded, lapsed]))
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.isEmpty)
            #expect(Set(response.rejections.map(\.description))
                == ["\(PurchaseFixture.level2): revoked", "\(PurchaseFixture.seasonPass): expired"])
        }
    }

    @Test func receiptForAnotherBundleIsInvalid() async throws {
        try await PurchaseFixture.run { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], bundleID: "com.example.other")
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.errorCode == "receipt_invalid")
        }
    }

    /// Spec §4.2: `{"receipt-data", "password" (only when a shared secret is set), "exclude-old-transactions": true}`.
    @Test(arguments: [nil, "s3cret-shared"] as [String?])
    func requestBodySentToApple(secret: String?) async throws {
        try await PurchaseFixture.run(appleSecret: secret) { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            let response = try await fixture.postReceipt(receipt)
            #expect(response.status == 200, "\(response.summary)")
            let body = try #require(fixture.apple.lastRequestBody)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            var expectedKeys: Set<String> = ["receipt-data", "exclude-old-transactions"]
            if secret != nil { expectedKeys.insert("password") }
            #expect(Set(object.keys) == expectedKeys)
            #expect(object["receipt-data"] as? String == receipt)
            #expect(object["password"] as? String == secret)
            // A JSON `true`, not the number 1 or a string.
            #expect(String(decoding: body, as: UTF8.self).contains("\"exclude-old-transactions\":true"))
            #expect(fixture.apple.lastRequestFields["receipt-data"] == receipt)
        }
    }

    @Test func wrongSharedSecretIsMisconfigured() async throws {
        try await PurchaseFixture.run(appleSecret: "apple-side-secret", configure: { configuration in
            configuration.appleSharedSecret = "depot-side-secret"
        }) { fixture in
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([PurchaseFixture.purchase()]))
            #expect(response.status == 502, "\(response.summary)")
            #expect(response.errorCode == "apple_misconfigured")
            #expect(response.object["appleStatus"] as? Int == 21004)
        }
    }

    @Test func identicalReceiptWithinAMinuteIsAnsweredFromTheCache() async throws {
        try await PurchaseFixture.run { fixture in
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            let first = try await fixture.postReceipt(receipt)
            #expect(first.status == 200)
            #expect(fixture.apple.calls(forReceipt: receipt) == 1)
            for _ in 0..<3 {
                let again = try await fixture.postReceipt(receipt)
                #expect(again.status == 200)
                #expect(again.entitlements.count == 1)
            }
            #expect(fixture.apple.calls(forReceipt: receipt) == 1)
            // Another receipt is not answered from that entry.
            let other = fixture.apple.issueReceipt([PurchaseFixture.purchase()])
            #expect(try await fixture.postReceipt(other).status == 200)
            #expect(fixture.apple.calls(forReceipt: other) == 1)
        }
    }

    /// A refund learned from a newer receipt revokes the purchase: the earlier token stops at once.
    @Test func refundSeenInALaterReceiptCutsOffEarlierTokens() async throws {
        try await PurchaseFixture.run { fixture in
            var purchase = PurchaseFixture.purchase()
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]))
            let token = try #require(bought.token)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)

            purchase.cancellationDate = Date()
            let later = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]))
            #expect(later.status == 200)
            #expect(later.rejections == [Rejection(product: PurchaseFixture.level2, reason: "revoked")])
            let refused = try await fixture.packStatus("level2", token: token)
            #expect(refused.status == 403)
            #expect(refused.errorCode == "revoked")
        }
    }

    /// Renewals of one subscription: the latest decides. A refunded old renewal does not cut off the
    /// current period; a refunded current renewal does.
    @Test(arguments: [false, true])
    func subscriptionRenewals(latestRefunded: Bool) async throws {
        try await PurchaseFixture.run { fixture in
            let now = Date()
            let day: TimeInterval = 86_400
            let original = PurchaseFixture.transactionID()
            let old = PurchaseFixture.purchase(PurchaseFixture.seasonPass, id: original,
                                               purchaseDate: PurchaseFixture.wholeSeconds(now.addingTimeInterval(-40 * day)),
                                               expires: now.addingTimeInterval(-10 * day),
                                               cancelled: latestRefunded ? nil : now.addingTimeInterval(-20 * day))
            let current = PurchaseFixture.purchase(PurchaseFixture.seasonPass, original: original,
                                                   purchaseDate: PurchaseFixture.wholeSeconds(now.addingTimeInterval(-10 * day)),
                                                   expires: now.addingTimeInterval(20 * day),
                                                   cancelled: latestRefunded ? now.addingTimeInterval(-day) : nil)
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([old, current]))
            #expect(response.status == 200, "\(response.summary)")
            if latestRefunded {
                #expect(response.entitlements.isEmpty)
                #expect(response.rejections == [Rejection(product: PurchaseFixture.seasonPass, reason: "revoked")])
            } else {
                #expect(response.rejected.isEmpty)
                try #require(response.entitlements.count == 1)
                #expect(response.entitlements[0]["transactionId"] as? String == current.transactionID)
                #expect(response.entitlements[0]["originalTransactionId"] as? String == original)
                #expect(try await fixture.packStatus("level3", token: try #require(response.token)).status == 307)
            }
        }
    }

    @Test func validReceiptWithoutPurchasesGrantsNothing() async throws {
        try await PurchaseFixture.run { fixture in
            let response = try await fixture.postReceipt(fixture.apple.issueReceipt([]))
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.object["environment"] as? String == "Production")
            #expect(response.entitlements.isEmpty)
            #expect(response.rejected.isEmpty)
            #expect(response.object["entitlements"] is [Any])
            #expect(response.object["rejected"] is [Any])
        }
    }

    /// Spec §7: wrong method is a `405` with `Allow` (RFC 9110 §15.5.6: a 405 carries `Allow`).
    @Test(arguments: ["/v1/receipts", "/v1/notifications/appstore"])
    func onlyPostIsAllowed(path: String) async throws {
        try await PurchaseFixture.run { fixture in
            let response = try await fixture.get(path)
            #expect(response.status == 405, "\(response.summary)")
            #expect(response.header("Allow") == "POST")
        }
    }
}
