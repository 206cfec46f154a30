import Foundation
@testable import Ledger

/// A fresh directory per test, removed afterwards, and purchase builders.
enum LedgerFixture {
    /// Runs `body` with the path of a ledger file in a new temporary directory.
    static func withPath(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ledger-tests-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("var/ledger.sqlite").path)
    }

    /// Runs `body` with a freshly opened ledger, closing it afterwards.
    static func withLedger(_ body: (Ledger, String) async throws -> Void) async throws {
        try await withPath { path in
            let ledger = try await Ledger.open(at: path)
            do {
                try await body(ledger, path)
                await ledger.close()
            } catch {
                await ledger.close()
                throw error
            }
        }
    }

    /// A fixed "now" (2026-11-30T00:00:00Z).
    static let now = Date(timeIntervalSince1970: 1_796_083_200)

    /// `now` moved by `days`.
    static func day(_ days: Double) -> Date { now.addingTimeInterval(days * 86_400) }

    /// A purchase with the given IDs, bought `daysAgo` before `now`.
    static func purchase(
        _ transactionID: String, original: String? = nil, product: String = "com.example.depot.level2",
        daysAgo: Double = 1, expiresInDays: Double? = nil, revokedDaysAgo: Double? = nil,
        source: LedgerPurchase.Source = .receipt
    ) -> LedgerPurchase {
        LedgerPurchase(
            transactionID: transactionID, originalTransactionID: original ?? transactionID, productID: product,
            environment: "Production", purchaseDate: day(-daysAgo), expiresDate: expiresInDays.map { day($0) },
            revocationDate: revokedDaysAgo.map { day(-$0) }, source: source)
    }

    static func revocation(_ transactionID: String, original: String? = nil, daysAgo: Double = 0) -> LedgerRevocation {
        LedgerRevocation(
            transactionID: transactionID, originalTransactionID: original ?? transactionID,
            revokedAt: day(-daysAgo), reason: "REFUND")
    }
}
