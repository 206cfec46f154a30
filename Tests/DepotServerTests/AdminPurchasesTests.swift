import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
import Ledger
import Testing
import DepotServer

/// The support view over HTTP (spec app-store-server-api §8): `GET /admin/v1/purchases`, support revoke and
/// restore, behind the admin token.
@Suite struct AdminPurchasesTests {
    static let adminToken = "admin-purchases-token-0123456789"

    /// A fixture with the admin API on, stopped after `body` whatever it does.
    static func run(_ body: (PurchaseFixture) async throws -> Void) async throws {
        try await PurchaseFixture.run(configure: { $0.adminToken = adminToken }, body)
    }

    /// `method path` with the admin token (or `token`, or none when `token` is "").
    static func send(_ fixture: PurchaseFixture, _ method: String, _ path: String, token: String = adminToken) async throws -> RawResponse {
        var raw = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if !token.isEmpty { raw += "Authorization: Bearer \(token)\r\n" }
        if method == "POST" { raw += "Content-Length: 0\r\n" }
        raw += "\r\n"
        let depot = fixture.depot
        let request = raw
        return try await OffPool.run { try depot.request(request) }
    }

    static func purchases(_ response: RawResponse) -> [[String: Any]] {
        response.object["purchases"] as? [[String: Any]] ?? []
    }

    static func query(_ name: String, _ value: String) -> String {
        "/admin/v1/purchases?\(name)=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)
    }

    @Test func aWrongOrMissingAdminTokenIs401AndBadQueriesAre400() async throws {
        try await Self.run { fixture in
            for (method, path) in [("GET", Self.query("account", "alice")), ("GET", Self.query("transaction", "1")),
                                   ("POST", WirePath.adminPurchaseRevoke(original: "1")), ("POST", WirePath.adminPurchaseRestore(original: "1"))] {
                for token in ["wrong-token", ""] {
                    let refused = try await Self.send(fixture, method, path, token: token)
                    #expect(refused.status == 401, "\(method) \(path): \(refused.summary)")
                    #expect(refused.errorCode == "unauthorized")
                    #expect(refused.header("WWW-Authenticate") == "Bearer")
                }
            }
            for path in ["/admin/v1/purchases", "/admin/v1/purchases?transaction=1&account=alice", "/admin/v1/purchases?transaction=",
                         "/admin/v1/purchases?account=alice&after=not-a-cursor", "/admin/v1/purchases?transaction=1&after=MTIzOng",
                         "/admin/v1/purchases?account=a&account=b", "/admin/v1/purchases?customer=alice"] {
                let bad = try await Self.send(fixture, "GET", path)
                #expect(bad.status == 400, "\(path): \(bad.summary)")
                #expect(bad.errorCode == "bad_request", "\(path)")
                #expect(bad.errorMessage?.isEmpty == false)
            }
            let nothing = try await Self.send(fixture, "GET", Self.query("transaction", "999"))
            #expect(nothing.status == 200, "\(nothing.summary)")
            #expect(nothing.text == "{\"purchases\": [], \"next\": null}\n")
            for path in [WirePath.adminPurchaseRevoke(original: "999"), WirePath.adminPurchaseRestore(original: "999")] {
                let unknown = try await Self.send(fixture, "POST", path)
                #expect(unknown.status == 404, "\(unknown.summary)")
                #expect(unknown.errorCode == "not_found")
            }
            // An ID longer than any purchase's (256 bytes) is refused before the ledger, the log or the answer sees it.
            let long = String(repeating: "7", count: 257)
            for path in [WirePath.adminPurchaseRevoke(original: long), WirePath.adminPurchaseRestore(original: long)] {
                let tooLong = try await Self.send(fixture, "POST", path)
                #expect(tooLong.status == 400, "\(tooLong.summary)")
                #expect(tooLong.errorCode == "bad_request")
                #expect(!tooLong.text.contains(long))
            }
            #expect(!fixture.depot.logs.lines.joined(separator: "\n").contains(long))
            #expect(try await Self.send(fixture, "GET", WirePath.adminPurchaseRevoke(original: "1")).status == 405)
        }
    }

    @Test func aSupportRevokeRefusesTheOldTokenAsRevokedOnceAndARestoreGivesAccessBack() async throws {
        try await Self.run { fixture in
            let purchase = PurchaseFixture.purchase(purchaseDate: Date(timeIntervalSince1970: 1_795_946_400))
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]), account: "alice")
            let token = try #require(bought.token, "\(bought.summary)")
            #expect(try await fixture.packStatus("level2", token: token).status == 307)

            let found = try await Self.send(fixture, "GET", Self.query("transaction", purchase.transactionID))
            #expect(found.status == 200, "\(found.summary)")
            #expect(found.header("Cache-Control") == "no-store")
            let listed = try #require(Self.purchases(found).first)
            #expect(Self.purchases(found).count == 1)
            #expect(found.object["next"] is NSNull)
            #expect(listed["originalTransactionId"] as? String == purchase.transactionID)
            #expect(listed["productId"] as? String == PurchaseFixture.level2)
            #expect(listed["pack"] as? String == "level2")
            #expect(listed["account"] as? String == "alice")
            #expect(listed["environment"] as? String == "Production")
            #expect(listed["purchased"] as? String == "2026-11-29T10:00:00Z")
            #expect(listed["state"] as? String == "granted")
            let grants = try #require(listed["grants"] as? [[String: Any]])
            #expect(grants.map { $0["transactionId"] as? String } == [purchase.transactionID])
            #expect(grants.first?["source"] as? String == "receipt")
            #expect((listed["revocations"] as? [Any])?.isEmpty == true)
            #expect(Self.purchases(try await Self.send(fixture, "GET", Self.query("account", "alice"))).count == 1)

            let revoked = try await Self.send(fixture, "POST", WirePath.adminPurchaseRevoke(original: purchase.transactionID))
            #expect(revoked.status == 200, "\(revoked.summary)")
            #expect(revoked.object["state"] as? String == "revoked")
            let revocations = try #require(revoked.object["revocations"] as? [[String: Any]])
            #expect(revocations.count == 1)
            #expect(revocations.first?["by"] as? String == "admin")
            #expect(revocations.first?["reason"] as? String == "support")
            #expect(revocations.first?["restored"] is NSNull)
            let refused = try await fixture.packStatus("level2", token: token)
            #expect(refused.status == 403, "\(refused.summary)")
            #expect(refused.errorCode == "revoked")
            #expect(fixture.depot.logs.lines.joined(separator: "\n").contains("support decision ADMIN_REVOKE for \(purchase.transactionID): revoked 1, restored 0"))

            // Idempotent: the same answer, nothing more recorded.
            let again = try await Self.send(fixture, "POST", WirePath.adminPurchaseRevoke(original: purchase.transactionID))
            #expect(again.status == 200, "\(again.summary)")
            #expect(again.text == revoked.text)
            let ledger = try #require(fixture.depot.app.ledger)
            #expect(try await ledger.purchase(transactionID: purchase.transactionID)?.revocations.count == 1)

            let beforeRestore = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let restored = try await Self.send(fixture, "POST", WirePath.adminPurchaseRestore(original: purchase.transactionID))
            #expect(restored.status == 200, "\(restored.summary)")
            #expect(restored.object["state"] as? String == "granted")
            // The revocation is lifted now, by the support decision.
            let lifted = try #require((restored.object["revocations"] as? [[String: Any]])?.first)
            let restoredAt = try #require((lifted["restored"] as? String).flatMap(InternetDate.parse), "\(lifted)")
            let revokedAt = try #require((lifted["at"] as? String).flatMap(InternetDate.parse), "\(lifted)")
            #expect(restoredAt >= beforeRestore && restoredAt <= Date(), "\(lifted)")
            #expect(restoredAt >= revokedAt)
            #expect(lifted["restoredBy"] as? String == "admin")
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
            let restoredAgain = try await Self.send(fixture, "POST", WirePath.adminPurchaseRestore(original: purchase.transactionID))
            #expect(restoredAgain.text == restored.text)
            // The look-up shows what the decisions answered.
            let after = try await Self.send(fixture, "GET", Self.query("transaction", purchase.transactionID))
            #expect(Self.purchases(after).first?["state"] as? String == "granted")
            #expect((Self.purchases(after).first?["revocations"] as? [Any])?.count == 1)
        }
    }

    @Test func anAccountsPurchasesPageByHundredNewestFirstWithoutDuplicates() async throws {
        try await Self.run { fixture in
            let ledger = try #require(fixture.depot.app.ledger)
            let start = Date(timeIntervalSince1970: 1_790_000_000)
            let purchases = (0..<150).map { index in
                LedgerPurchase(transactionID: "p\(1_000 + index)", originalTransactionID: "p\(1_000 + index)", productID: PurchaseFixture.level2,
                               environment: "Production", purchaseDate: start.addingTimeInterval(Double(index) * 60), source: .receipt)
            }
            _ = try await ledger.record(purchases, account: "bulk@example.com", policy: .transfer, now: Date())
            let first = try await Self.send(fixture, "GET", Self.query("account", "bulk@example.com"))
            #expect(first.status == 200, "\(first.summary)")
            let next = try #require(first.object["next"] as? String)
            let second = try await Self.send(fixture, "GET", Self.query("account", "bulk@example.com") + "&after=" + next)
            #expect(second.status == 200, "\(second.summary)")
            #expect(second.object["next"] is NSNull)
            let ids = (Self.purchases(first) + Self.purchases(second)).compactMap { $0["originalTransactionId"] as? String }
            #expect(Self.purchases(first).count == 100)
            #expect(Self.purchases(second).count == 50)
            #expect(Set(ids).count == 150)
            #expect(ids == (0..<150).reversed().map { "p\(1_000 + $0)" })
        }
    }

    /// `depot purchases show` reads the ledger of a running server (its `--data`) and prints the same facts.
    @Test func depotPurchasesShowPrintsThePurchaseAndExitsAsTheOtherVerbs() async throws {
        try await Self.run { fixture in
            let purchase = PurchaseFixture.purchase(purchaseDate: Date(timeIntervalSince1970: 1_795_946_400))
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]), account: "ada")
            #expect(bought.token != nil, "\(bought.summary)")
            #expect(try await Self.send(fixture, "POST", WirePath.adminPurchaseRevoke(original: purchase.transactionID)).status == 200)
            let configuration = fixture.depot.app.configuration
            let options = ["--data", configuration.dataDirectory, "--catalog", configuration.catalogDirectory]

            let shown = try await NotificationCommandTests.depot(["purchases", "show", "--transaction", purchase.transactionID] + options)
            #expect(shown.status == 0, "\(shown.stderr)")
            let lines = shown.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "purchase \(purchase.transactionID): revoked")
            #expect(lines.contains("  product      \(PurchaseFixture.level2) (pack level2)"), "\(shown.stdout)")
            #expect(lines.contains("  purchased    2026-11-29T10:00:00Z"), "\(shown.stdout)")
            #expect(lines.contains { $0.hasPrefix("  account      ada (bound ") }, "\(shown.stdout)")
            #expect(lines.contains { $0.hasPrefix("  grants       \(purchase.transactionID) \(PurchaseFixture.level2) purchased 2026-11-29T10:00:00Z [receipt]") },
                    "\(shown.stdout)")
            #expect(lines.contains { $0.hasPrefix("  revocations  ") && $0.hasSuffix(" support by admin, in force") }, "\(shown.stdout)")
            let byAccount = try await NotificationCommandTests.depot(["purchases", "show", "--account", "ada"] + options)
            #expect(byAccount.status == 0, "\(byAccount.stderr)")
            #expect(byAccount.stdout == shown.stdout)

            let unknown = try await NotificationCommandTests.depot(["purchases", "show", "--transaction", "404404"] + options)
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("no purchase with transaction ID 404404"), "\(unknown.stderr)")
            for usage in [[String](), ["--transaction", "1", "--account", "ada"], ["--transaction", "1", "--after", "x"]] {
                let refused = try await NotificationCommandTests.depot(["purchases", "show"] + usage + options)
                #expect(refused.status == 64, "\(usage): \(refused.stderr)")
            }
        }
    }

    /// What a purchase's tokens downloaded shows up in the look-up (the delivery record of issue 14).
    @Test func aCompleteDownloadShowsAsDeliveredInTheLookUpAndInDepotPurchasesShow() async throws {
        try await Self.run { fixture in
            let purchase = PurchaseFixture.purchase()
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]), account: "eve")
            let token = try #require(bought.token, "\(bought.summary)")
            let before = try await Self.send(fixture, "GET", Self.query("transaction", purchase.transactionID))
            #expect((Self.purchases(before).first?["delivery"] as? [String: Any])?["versions"] as? [Any] != nil, "\(before.summary)")
            #expect(((Self.purchases(before).first?["delivery"] as? [String: Any])?["versions"] as? [Any])?.isEmpty == true)
            #expect((Self.purchases(before).first?["consumptionAnswers"] as? [Any])?.isEmpty == true)
            let manifest = try await fixture.get("/v1/packs/level2/1/manifest", token: token)
            let files = try #require(manifest.object["files"] as? [[String: Any]])
            for file in files {
                let url = try #require(file["url"] as? String)
                #expect(try await fixture.get(url, token: token).status == 200)
            }
            let total = files.compactMap { $0["size"] as? Int }.reduce(0, +)
            var version: [String: Any] = [:]
            let delivered = try await eventually(within: 30) {
                let found = try await Self.send(fixture, "GET", Self.query("account", "eve"))
                version = ((Self.purchases(found).first?["delivery"] as? [String: Any])?["versions"] as? [[String: Any]])?.first ?? [:]
                return version["complete"] as? Bool == true
            }
            #expect(delivered, "\(version)")
            #expect(version["pack"] as? String == "level2")
            #expect(version["version"] as? Int == 1)
            #expect(version["deliveredBytes"] as? Int == total)
            #expect(version["totalBytes"] as? Int == total)
            #expect(version["chunks"] as? Int == version["totalChunks"] as? Int)
            let configuration = fixture.depot.app.configuration
            let shown = try await NotificationCommandTests.depot(["purchases", "show", "--transaction", purchase.transactionID, "--data",
                                                                  configuration.dataDirectory, "--catalog", configuration.catalogDirectory,
                                                                  "--content", configuration.contentDirectory])
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.contains("of \(total) bytes, complete"), "\(shown.stdout)")
            #expect(shown.stdout.contains("  consumption  no refund request answered"), "\(shown.stdout)")
        }
    }
}
