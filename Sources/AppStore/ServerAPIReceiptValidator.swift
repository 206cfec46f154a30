import DepotCrypto
public import Foundation

/// What a legacy receipt comes to through the App Store Server API.
public enum ReceiptValidation: Sendable, Equatable {
    /// An app receipt without in-app purchases: `200` with empty `entitlements`; Apple was not asked.
    case noPurchase
    /// The customer's whole history, every transaction verified: judge them as StoreKit 2
    /// transactions; the answer's `environment` is `history.environment`.
    case history(TransactionHistory)
}

/// Validates legacy receipts without `verifyReceipt` (spec §3): a transaction ID is read from the
/// receipt (`LegacyReceiptReader`), then Get Transaction History v2 returns every page of the
/// customer's signed transactions, each verified like a JWS an app sends. Identical receipts within
/// a minute are answered from a cache (final answers only, never a transient failure), and
/// identical receipts in flight share one lookup, as for `verifyReceipt`.
///
/// Results map one to one onto the purchase route: `.success(.noPurchase)` and
/// `.success(.history)` are `200`; `.invalid` is `422 receipt_invalid` (with `check` when set:
/// `format` for a receipt that is not one); `.unavailable` is `503 apple_unavailable` with
/// `Retry-After`; `.misconfigured` is `502 apple_misconfigured`.
public final class ServerAPIReceiptValidator: Sendable {
    /// The API client the lookups go through.
    public let client: ServerAPIClient
    private let cache: SharedResultCache<Result<ReceiptValidation, ServerAPIFailure>>

    /// A validator over `client`, keeping answers for `cacheLifetime` seconds (at most
    /// `cacheCapacity` of them).
    public init(client: ServerAPIClient, cacheLifetime: Double = 60, cacheCapacity: Int = 10_000) {
        self.client = client
        cache = SharedResultCache(lifetime: cacheLifetime, capacity: cacheCapacity) { result in
            switch result {
            case .success, .failure(.invalid): true
            case .failure(.unavailable), .failure(.misconfigured): false
            }
        }
    }

    /// Validations waiting for the Server API now: each lookup in flight and the identical requests sharing
    /// it (answers from the cache never wait).
    public var waitingRequests: Int { cache.waiting }

    /// Validates base64 receipt data (an app receipt or an iOS 6 transaction receipt).
    public func validate(receipt: String, now: Date) async -> Result<ReceiptValidation, ServerAPIFailure> {
        let id: String
        switch LegacyReceiptReader.transactionID(fromBase64: receipt) {
        case .noPurchase: return .success(.noPurchase)
        case .notAReceipt(let reason): return .failure(.invalid(check: .format, appleErrorCode: nil, reason: reason))
        case .found(let found): id = found
        }
        let key = Hex.encode(SHA256.hash(Array(receipt.utf8)))
        let shared = ServerAPIFailure.unavailable(retryAfter: client.configuration.defaultRetryAfter, appleErrorCode: nil,
                                                  reason: "a concurrent identical request failed; try again")
        return await cache.value(for: key, now: now, whenSharedFailed: .failure(shared)) {
            await client.transactionHistory(for: id, now: now).map { .history($0) }
        }
    }
}
