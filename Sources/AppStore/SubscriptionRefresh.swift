public import DepotCore
public import Foundation

/// What Apple's latest state says about an expired auto-renewable purchase (spec §5).
public enum SubscriptionRefresh: Sendable, Equatable {
    /// Apple's newest verified transaction of the original transaction decides: renewed when its
    /// `expiresDate` is after now (an entitlement with the new expiry), expired otherwise, revoked
    /// when it carries a `revocationDate`.
    case latest(StoreKitTransaction)
    /// A signed item of Apple's answer failed its check: `422 receipt_invalid` with the check,
    /// never a grant.
    case invalid(ServerAPIFailure)
    /// The lookup failed (Apple unavailable or misconfigured, the transaction unknown, no entry for
    /// it): judge the presented transaction, which has expired. Never a grant. `failure` is for the log.
    case presented(StoreKitTransaction, failure: ServerAPIFailure?)

    /// The transaction to judge.
    public var transaction: StoreKitTransaction? {
        switch self {
        case .latest(let transaction), .presented(let transaction, _): transaction
        case .invalid: nil
        }
    }

    /// True when Apple's newest transaction runs past `now` and is not revoked.
    public func isRenewed(at now: Date) -> Bool {
        guard case .latest(let transaction) = self, transaction.revocationDate == nil,
              let expires = transaction.expiresDate else { return false }
        return expires > now
    }
}
