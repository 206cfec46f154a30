/// What a signed App Store payload holds; decides where its bundle ID and environment are read.
public enum SignedDataKind: Sendable {
    /// A signed transaction: top-level `bundleId` and `environment`.
    case transaction
    /// A signed renewal info: no bundle ID, top-level `environment`.
    case renewalInfo
    /// A V2 notification: `data.bundleId`/`data.environment` (or `summary`, or
    /// `externalPurchaseToken`).
    case notification
}
