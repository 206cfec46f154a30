/// Who took a purchase's access away (spec app-store-server-api §8): Apple (a refund or revocation, from a
/// notification or from purchase data) or the studio's support staff (a support decision through the admin API).
public enum RevocationAuthority: String, Sendable, Equatable, CaseIterable {
    /// Apple: a `REFUND`/`REVOKE` notification, or a revocation date in a receipt or signed transaction.
    case apple
    /// A support decision (`POST /admin/v1/purchases/{id}/revoke`).
    case admin
}
