import DepotCore
import DepotWire
import Foundation
import Testing

/// spec §4.2 and README "Tokens and accounts": which purchases release which packs, decided without a server.
@Suite struct EntitlementRulesTests {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)
    static let catalog = Catalog(products: [
        Product(id: "level2", type: .nonConsumable, title: "L2", pack: "level2"),
        Product(id: "coins", type: .consumable, title: "Coins"),
        Product(id: "season", type: .autoRenewable, title: "Season", pack: "season"),
        Product(id: "old", type: .nonConsumable, title: "Old", pack: "old", status: .retired),
    ])

    static func fact(_ product: String, _ transaction: String, original: String? = nil, purchased: TimeInterval = -3600,
                     expires: TimeInterval? = nil, revoked: Bool = false) -> PurchaseFact {
        PurchaseFact(productID: product, transactionID: transaction, originalTransactionID: original ?? transaction,
                     purchaseDate: now.addingTimeInterval(purchased), expiresDate: expires.map { now.addingTimeInterval($0) },
                     revocationDate: revoked ? now.addingTimeInterval(-60) : nil, environment: "Production", source: .jws)
    }

    static func judge(_ facts: [PurchaseFact], standing: PurchaseStanding = PurchaseStanding(),
                      subscriptionExpired: Bool = false) -> [EntitlementVerdict] {
        EntitlementRules.judge(facts, catalog: catalog, standing: { _ in standing }, subscriptionExpired: subscriptionExpired, now: now)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let fact: PurchaseFact
        let standing: PurchaseStanding
        let subscriptionExpired: Bool
        let expected: RejectedPurchase.Reason?
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a pack purchase grants", fact: fact("level2", "1"), standing: .init(), subscriptionExpired: false, expected: nil),
        Row(name: "a retired product still grants", fact: fact("old", "1"), standing: .init(), subscriptionExpired: false, expected: nil),
        Row(name: "unknown product", fact: fact("nosuch", "1"), standing: .init(), subscriptionExpired: false, expected: .unknownProduct),
        Row(name: "no pack", fact: fact("coins", "1"), standing: .init(), subscriptionExpired: false, expected: .noPack),
        Row(name: "revocation date", fact: fact("level2", "1", revoked: true), standing: .init(), subscriptionExpired: false, expected: .revoked),
        Row(name: "policy refused this account", fact: fact("level2", "1"), standing: .init(refusedBinding: true),
            subscriptionExpired: false, expected: .boundToOtherAccount),
        Row(name: "ledger says revoked", fact: fact("level2", "1"), standing: .init(access: .revoked), subscriptionExpired: false, expected: .revoked),
        Row(name: "transferred to another account", fact: fact("level2", "1"), standing: .init(access: .transferred),
            subscriptionExpired: false, expected: .boundToOtherAccount),
        Row(name: "subscription running", fact: fact("season", "1", expires: 60), standing: .init(), subscriptionExpired: false, expected: nil),
        Row(name: "subscription expired", fact: fact("season", "1", expires: -1), standing: .init(), subscriptionExpired: false, expected: .expired),
        Row(name: "expiring exactly now is expired", fact: fact("season", "1", expires: 0), standing: .init(), subscriptionExpired: false,
            expected: .expired),
        Row(name: "auto-renewable without an expiry", fact: fact("season", "1"), standing: .init(), subscriptionExpired: false, expected: .expired),
        Row(name: "receipt status 21006", fact: fact("level2", "1"), standing: .init(), subscriptionExpired: true, expected: .expired),
        // Order of the checks: the first that applies names the reason.
        Row(name: "unknown before revoked", fact: fact("nosuch", "1", revoked: true), standing: .init(access: .revoked),
            subscriptionExpired: true, expected: .unknownProduct),
        Row(name: "no pack before revoked", fact: fact("coins", "1", revoked: true), standing: .init(), subscriptionExpired: false,
            expected: .noPack),
        Row(name: "revocation date before the binding", fact: fact("level2", "1", revoked: true), standing: .init(refusedBinding: true),
            subscriptionExpired: false, expected: .revoked),
        Row(name: "binding before the ledger's revocation", fact: fact("level2", "1"),
            standing: .init(refusedBinding: true, access: .revoked), subscriptionExpired: false, expected: .boundToOtherAccount),
        Row(name: "ledger revocation before expiry", fact: fact("season", "1", expires: -1), standing: .init(access: .revoked),
            subscriptionExpired: false, expected: .revoked),
    ]

    @Test(arguments: rows)
    func oneReasonPerPurchase(_ row: Row) {
        let verdicts = Self.judge([row.fact], standing: row.standing, subscriptionExpired: row.subscriptionExpired)
        #expect(verdicts.count == 1)
        switch verdicts.first {
        case .granted(let fact, let pack):
            #expect(row.expected == nil, "granted, expected \(String(describing: row.expected))")
            #expect(fact == row.fact)
            #expect(pack == Self.catalog.product(id: row.fact.productID)?.pack)
        case .rejected(let fact, let reason):
            #expect(reason == row.expected)
            #expect(fact == row.fact)
        case nil:
            Issue.record("no verdict")
        }
    }

    /// One entitlement per original transaction, judged by its newest transaction: a refunded old renewal does
    /// not cut off the current one; original transactions keep their first-seen order.
    @Test func newestTransactionOfEachOriginalIsJudged() {
        let verdicts = Self.judge([
            Self.fact("season", "r1", original: "s", purchased: -7200, expires: -3600, revoked: true),
            Self.fact("level2", "l1"),
            Self.fact("season", "r2", original: "s", purchased: -600, expires: 3600),
        ])
        #expect(verdicts.map(\.fact.transactionID) == ["r2", "l1"])
        #expect(verdicts.allSatisfy { if case .granted = $0 { true } else { false } })
    }

    @Test func sameDateTiesGoToTheLargerTransactionID() {
        let verdicts = Self.judge([Self.fact("level2", "b", original: "o"), Self.fact("level2", "a", original: "o")])
        #expect(verdicts.map(\.fact.transactionID) == ["b"])
    }

    /// The ledger is asked only about purchases that got that far, and with their original transaction.
    @Test func standingIsAskedForTheOriginalTransactionOnly() {
        var asked: [String] = []
        _ = EntitlementRules.judge([Self.fact("coins", "c"), Self.fact("level2", "r2", original: "o")], catalog: Self.catalog,
                                   standing: { asked.append($0); return PurchaseStanding() }, subscriptionExpired: false, now: Self.now)
        #expect(asked == ["o"])
    }
}
