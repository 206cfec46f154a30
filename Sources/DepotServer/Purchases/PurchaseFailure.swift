package import AppStore

/// Why `POST /v1/receipts` (spec §4.2) did not answer with entitlements.
package enum PurchaseFailure: Error, Sendable, Equatable {
    /// The body is not `application/json` in UTF-8 (also for notifications).
    case unsupportedMediaType
    /// The body cannot be read: not JSON, neither or both fields, wrong types, bad base64.
    case badRequest(String)
    /// Apple or the JWS check refused the purchase; `appleStatus` when Apple gave one, `check` for a JWS.
    case receiptInvalid(String, appleStatus: Int? = nil, check: String? = nil)
    /// `verifyReceipt` cannot answer now (keep the transaction unfinished and try again).
    case appleUnavailable(appleStatus: Int?)
    /// A signed transaction could not be checked right now (libcrypto failed to run the check).
    case verificationUnavailable
    /// Apple refused the server's configuration (shared secret, endpoint).
    case appleMisconfigured(appleStatus: Int?)
    /// No catalog has loaded, so nothing can be judged.
    case catalogUnavailable
    /// The ledger could not record the purchase.
    case ledgerUnavailable
    /// The App Store Server API gave no usable answer (spec app-store-server-api §2): `422` with its check,
    /// `503` with its `Retry-After`, or `502`.
    case serverAPI(ServerAPIFailure)
    /// `"history": true` without an In-App Purchase key.
    case historyUnavailable
}
