/// What a support decision changes, in the terms of an App Store notification, so that it takes the same
/// path through the ledger as a refund (`Ledger.apply(notificationID:type:revoke:restore:now:)`): the same
/// transaction, the same access rule, the same propagation to every instance.
///
/// The notification ID is derived from the purchase's state (`admin:revoke:<original>:<revocations on file>`,
/// `admin:restore:<original>:<revocations lifted>`), so two instances deciding the same thing at the same
/// moment record it once.
public struct SupportChange: Sendable, Equatable {
    /// The purchase as it stands before the change.
    public var purchase: PurchaseRecord
    /// The ID the change is recorded under among processed notifications.
    public var notificationID: String
    /// `ADMIN_REVOKE` or `ADMIN_RESTORE`.
    public var type: String
    /// The revocation to record (a support revoke of a purchase not revoked yet).
    public var revoke: [LedgerRevocation]
    /// The transactions whose revocations in force are lifted (a support restore of a revoked purchase).
    public var restore: [String]

    /// Whether there is nothing to do: revoking what is revoked, or restoring what is not.
    public var isEmpty: Bool { revoke.isEmpty && restore.isEmpty }
}
