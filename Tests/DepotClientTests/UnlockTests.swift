import Foundation
import Testing
import DepotClient

@Suite struct UnlockTests {
    let answer = """
        {"environment": "Production",
         "entitlements": [
           {"productId": "com.example.depot.level2", "pack": "level2",
            "transactionId": "1000000318012065", "originalTransactionId": "1000000318012000",
            "purchaseDate": "2026-11-29T10:00:00Z", "expiresDate": null,
            "token": "tok.sig", "tokenExpires": "2026-11-30T03:33:58Z",
            "manifest": "/v1/packs/level2/manifest"}],
         "rejected": [
           {"productId": "com.example.depot.level9", "transactionId": "77", "reason": "expired"},
           {"productId": "com.example.depot.sub", "transactionId": "78", "reason": "something_new"}]}
        """

    @Test func receiptIsPostedAsBase64WithAccountAndEntitlementsDecode() async throws {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.receiptsReply = .json(200, answer) }
        let result = try await server.client().unlock(receipt: Data([1, 2, 3, 250]), account: "user-7")

        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.url.path == "/v1/receipts")
        #expect(request.header("Content-Type")?.hasPrefix("application/json") == true)
        let body = try #require(JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any])
        #expect(body["receipt"] as? String == Data([1, 2, 3, 250]).base64EncodedString())
        #expect(body["account"] as? String == "user-7")
        #expect(body["transactions"] == nil)

        #expect(result.environment == "Production")
        let entitlement = try #require(result.entitlements.first)
        #expect(entitlement.productId == "com.example.depot.level2")
        #expect(entitlement.pack == "level2")
        #expect(entitlement.transactionId == "1000000318012065")
        #expect(entitlement.originalTransactionId == "1000000318012000")
        #expect(entitlement.purchaseDate == InternetDate.parse("2026-11-29T10:00:00Z"))
        #expect(entitlement.expiresDate == nil)
        #expect(entitlement.token == "tok.sig")
        #expect(entitlement.tokenExpires == InternetDate.parse("2026-11-30T03:33:58Z"))
        #expect(entitlement.manifest == "/v1/packs/level2/manifest")
        #expect(try result.token(forPack: "level2") == "tok.sig")
        #expect(result.rejected == [
            RejectedPurchase(productId: "com.example.depot.level9", transactionId: "77", reason: .expired),
            RejectedPurchase(productId: "com.example.depot.sub", transactionId: "78", reason: .init(rawValue: "something_new")),
        ])
    }

    @Test func transactionsArePostedWithoutAccountWhenNil() async throws {
        let server = FakeDepot()
        defer { server.close() }
        let result = try await server.client().unlock(transactions: ["jws.one", "jws.two"])
        #expect(result.entitlements.isEmpty)
        #expect(result.rejected.isEmpty)
        let body = try #require(JSONSerialization.jsonObject(with: server.requests[0].body ?? Data()) as? [String: Any])
        #expect(body["transactions"] as? [String] == ["jws.one", "jws.two"])
        #expect(body["account"] == nil)
        #expect(body["receipt"] == nil)
    }

    @Test func entitlementRoundTripsThroughCodable() throws {
        let data = Data(answer.utf8)
        let entitlement = try JSONDecoder().decode(UnlockResult.self, from: data).entitlements[0]
        let again = try JSONDecoder().decode(Entitlement.self, from: JSONEncoder().encode(entitlement))
        #expect(again == entitlement)
    }

    @Test func invalidReceiptCarriesAppleStatus() async {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.receiptsReply = .error(422, "receipt_invalid", extra: ", \"appleStatus\": 21003") }
        let error = await depotError { _ = try await server.client().unlock(receiptBase64: "AAAA") }
        guard case .invalidReceipt(let status, let check) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(status == 21003)
        #expect(check == nil)
    }

    @Test func invalidTransactionCarriesTheFailedCheck() async {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.receiptsReply = .error(422, "receipt_invalid", extra: ", \"check\": \"chain\"") }
        let error = await depotError { _ = try await server.client().unlock(transactions: ["x"]) }
        guard case .invalidReceipt(nil, "chain") = error else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test func unavailableAppleMeansRetryLaterWithRetryAfter() async {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.receiptsReply = .error(503, "apple_unavailable", headers: ["Retry-After": "7"]) }
        let error = await depotError { _ = try await server.client().unlock(receiptBase64: "AAAA") }
        guard case .retryLater(let after) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(after == 7)
    }

    @Test func offlineIsATransportError() async {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.offline = true }
        let error = await depotError { _ = try await server.client().unlock(receiptBase64: "AAAA") }
        guard case .transport(let underlying) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect((underlying as? URLError)?.code == .notConnectedToInternet)
    }

    @Test func malformedSuccessIsAnInvalidResponse() async {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.receiptsReply = .json(200, "{\"entitlements\": [{\"pack\": 3}]}") }
        let error = await depotError { _ = try await server.client().unlock(receiptBase64: "AAAA") }
        guard case .invalidResponse = error else { Issue.record("got \(String(describing: error))"); return }
    }
}
