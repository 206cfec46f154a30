import DepotTestSupport
import Foundation
import Ledger
import Testing
import DepotServer

/// `GET /v1/edge/authorize` records what it allows as delivered (spec app-store-server-api §7) only for the edge
/// itself: a request without the edge secret, or with a wrong one, is answered the same way but records nothing,
/// so a client holding a token cannot make its purchase look delivered by asking the route directly.
@Suite struct EdgeAuthorizeRecordTests {
    static let secret = "edge-secret-for-the-authorize-record-test-0123"

    /// Asks the authorize route about `range.bin` of `testpack` 1 with a token of `transaction`.
    static func authorize(_ fixture: PackFixture, transaction: String, secret: String?) async throws -> RawResponse {
        var headers = ["X-Original-URI": fixture.fileURL("range.bin")]
        if let secret { headers[EdgeRoutes.secretField] = secret }
        let (token, fields) = (fixture.token(transaction: transaction), headers)
        return try await OffPool.run { try fixture.request("/v1/edge/authorize", fields, credential: .bearer(token)) }
    }

    /// What the ledger of the stopped server `fixture` recorded for each of `transactions`, by transaction.
    static func recorded(_ fixture: PackFixture, _ transactions: [String]) async throws -> [String: [LedgerDelivery]] {
        let data = fixture.depot.dataDirectory
        await fixture.depot.stop()
        let ledger = try await Ledger.open(at: data + "/ledger.sqlite")
        var found: [String: [LedgerDelivery]] = [:]
        for transaction in transactions { found[transaction] = try await ledger.deliveries(originalTransactionID: transaction) }
        await ledger.close()
        return found
    }

    @Test func onlyARequestWithTheEdgeSecretRecordsTheAuthorizedRange() async throws {
        let fixture = try await PackFixture.start { $0.edgeSecret = Self.secret }
        let without = try await Self.authorize(fixture, transaction: "7100000000000001", secret: nil)
        let wrong = try await Self.authorize(fixture, transaction: "7100000000000002", secret: String(Self.secret.dropLast()) + "4")
        let edge = try await Self.authorize(fixture, transaction: "7100000000000003", secret: Self.secret)
        // The answer itself does not depend on the secret (it checks the token and revocation).
        for answer in [without, wrong, edge] { #expect(answer.status == 204, "\(answer.summary)") }
        // Stopping writes what the loops gathered.
        let records = try await Self.recorded(fixture, ["7100000000000001", "7100000000000002", "7100000000000003"])
        #expect(records["7100000000000001"] == [], "recorded without the edge secret")
        #expect(records["7100000000000002"] == [], "recorded with a wrong edge secret")
        #expect(records["7100000000000003"]?.map(\.path) == ["range.bin"])
        #expect(records["7100000000000003"]?.first?.deliveredBytes == 1000)
    }

    @Test func withoutAnEdgeSecretConfiguredTheRouteAnswersButRecordsNothing() async throws {
        let fixture = try await PackFixture.start()
        let answer = try await Self.authorize(fixture, transaction: "7100000000000004", secret: Self.secret)
        #expect(answer.status == 204, "\(answer.summary)")
        let records = try await Self.recorded(fixture, ["7100000000000004"])
        #expect(records["7100000000000004"] == [])
    }
}
