import DepotWire
public import Foundation

/// Which purchases release which packs (spec §4.2): pure rules over typed values, with time and the ledger's
/// view passed in.
public enum EntitlementRules {
    /// Judges `facts`: one verdict per original transaction (the first-seen order), judged by its newest
    /// transaction, so a refunded old renewal does not cut off a current one. In order, a purchase is refused
    /// when its product is unknown, has no pack, the purchase carries a revocation date, the account policy
    /// refused this account, the ledger says revoked (or transferred to another account), it expired (or the
    /// whole receipt did: `subscriptionExpired`, status 21006), or it is an auto-renewable subscription
    /// without an expiry date (nothing shows it runs). Otherwise it releases its product's pack.
    ///
    /// - Parameters:
    ///   - standing: the ledger's view of an original transaction for the presenting account; asked only for
    ///     purchases that pass the checks before it.
    ///   - now: the time expiry is judged at.
    public static func judge(_ facts: [PurchaseFact], catalog: Catalog, standing: (_ originalTransactionID: String) -> PurchaseStanding,
                             subscriptionExpired: Bool, now: Date) -> [EntitlementVerdict] {
        PurchaseFact.latestPerOriginal(facts).map { fact in
            guard let product = catalog.product(id: fact.productID) else { return .rejected(fact, .unknownProduct) }
            guard let pack = product.pack else { return .rejected(fact, .noPack) }
            if fact.revocationDate != nil { return .rejected(fact, .revoked) }
            let ledger = standing(fact.originalTransactionID)
            if ledger.refusedBinding { return .rejected(fact, .boundToOtherAccount) }
            switch ledger.access {
            case .revoked: return .rejected(fact, .revoked)
            case .transferred: return .rejected(fact, .boundToOtherAccount)
            case .allowed: break
            }
            if subscriptionExpired || (fact.expiresDate.map { $0 <= now } ?? false) { return .rejected(fact, .expired) }
            // An auto-renewable subscription grants only while it runs: without an expiry date nothing shows it does.
            if product.type == .autoRenewable && fact.expiresDate == nil { return .rejected(fact, .expired) }
            return .granted(fact, pack: pack)
        }
    }
}
