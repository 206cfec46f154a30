import AppStoreSimulator
import DepotServer
import DepotTestSupport
import DepotWire
import Foundation
import Ledger
import Testing

/// operations.md §3, scale-out.md §3: a SQLite ledger whose writes fail for want of space makes `/healthz`
/// `503 unavailable` (the ledger's part `unavailable`, the reason quoting SQLite) and `depot_ledger_up` 0 until
/// it can be written again, then `200` by itself. The file is capped at its size with `PRAGMA max_page_count`
/// on the server's own connection, so SQLite fails the receipt's write with `SQLITE_FULL` for real.
@Suite struct LedgerUnwritableHealthTests {
    static func ledgerUp(_ depot: TestDepot) async throws -> String? {
        let metrics = try await depot.send("GET", "/metrics")
        return metrics.text.split(separator: "\n").first { $0.hasPrefix("depot_ledger_up ") }.map(String.init)
    }

    static func report(_ response: RawResponse) throws -> HealthReport {
        try JSONDecoder().decode(HealthReport.self, from: Data(response.body))
    }

    @Test func aFullSQLiteLedgerIsUnavailableUntilItCanBeWrittenAgain() async throws {
        try await PurchaseFixture.run { fixture in
            let depot = fixture.depot
            let ledger = try #require(depot.app.ledger)
            let healthy = try await depot.send("GET", "/healthz")
            #expect(healthy.status == 200, "\(healthy.text)")
            #expect(try Self.report(healthy).status == HealthReport.ok, "\(healthy.text)")
            #expect(try await Self.ledgerUp(depot) == "depot_ledger_up 1")

            let pages = try #require(try await ledger.pragma("page_count"))
            #expect(try await ledger.pragma("max_page_count = \(pages)") == pages)
            let receipt = fixture.apple.issueReceipt((0..<60).map { _ in PurchaseFixture.purchase() })
            let refused = try await fixture.postReceipt(receipt, account: "account-a")
            #expect(refused.status == 503 && refused.errorCode == "ledger_unavailable", "\(refused.summary)")

            let unavailable = try await depot.send("GET", "/healthz")
            #expect(unavailable.status == 503, "\(unavailable.text)")
            let report = try Self.report(unavailable)
            #expect(report.status == HealthReport.unavailable)
            #expect(report.ledger == HealthReport.LedgerState(status: "unavailable", backend: "sqlite"))
            #expect(report.reasons.count == 1, "\(report.reasons)")
            #expect(report.reasons.first?.hasPrefix("the ledger cannot be written: ") == true, "\(report.reasons)")
            #expect(report.reasons.first?.contains("database or disk is full") == true, "\(report.reasons)")
            #expect(try await Self.ledgerUp(depot) == "depot_ledger_up 0")

            // Room again: the next health check's probe commits; nothing else is needed.
            _ = try await ledger.pragma("max_page_count = 1000000")
            let back = try await depot.send("GET", "/healthz")
            #expect(back.status == 200, "\(back.text)")
            let recovered = try Self.report(back)
            #expect(recovered.status == HealthReport.ok && recovered.reasons.isEmpty, "\(back.text)")
            #expect(recovered.ledger == HealthReport.LedgerState(status: "ok", backend: "sqlite"))
            #expect(try await Self.ledgerUp(depot) == "depot_ledger_up 1")
            let retried = try await fixture.postReceipt(receipt, account: "account-a")
            #expect(retried.status == 200, "\(retried.summary)")
        }
    }
}
