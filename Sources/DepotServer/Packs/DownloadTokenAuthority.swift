package import DepotCore
import DepotCrypto
import HTTP

/// Issues and checks download tokens: `base64url(payload).base64url(HMAC-SHA256(key, payload))`.
package struct DownloadTokenAuthority: Sendable {
    let key: [UInt8]

    /// An authority that signs and checks with `key`.
    package init(key: [UInt8]) {
        self.key = key
    }

    /// A token carrying `claims`, signed with the key.
    package func issue(_ claims: DownloadTokenClaims) -> String {
        let payload = claims.payload()
        return Base64URL.encode(payload) + "." + Base64URL.encode(HMACSHA256.authenticate(payload, key: key))
    }

    /// Checks the signature (constant time), then the expiry against `now` (seconds since 1970).
    package func verify(_ token: String, now: Int64) -> Result<DownloadTokenClaims, TokenRejection> {
        guard token.utf8.count <= 4096 else { return .failure(.invalid) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let tag = Base64URL.decode(parts[1]),
              tag.count == HMACSHA256.tagLength else { return .failure(.invalid) }
        let expected = HMACSHA256.authenticate(payload, key: key)
        guard ConstantTime.equals(expected, tag) else { return .failure(.invalid) }
        guard let claims = DownloadTokenClaims.parse(payload: payload) else { return .failure(.invalid) }
        guard claims.expires > now else { return .failure(.expired) }
        return .success(claims)
    }
}

/// Answers whether the purchase behind a token still grants access; backed by the ledger.
package protocol AccessChecker: Sendable {
    /// `false` when the original transaction was revoked, or moved to another account.
    func isAllowed(originalTransactionID: String, account: String?) -> Bool
    /// Whether the state `isAllowed` answers from is recent enough to serve pack files on (scale-out §3:
    /// at most `--ledger-stale-max` seconds since it was last confirmed).
    var isCurrent: Bool { get }
}

extension AccessChecker {
    /// A checker whose state is always current (one process, one SQLite file).
    package var isCurrent: Bool { true }
}

/// Nothing is revoked (no ledger configured).
package struct AllowAllAccess: AccessChecker {
    package init() {}

    package func isAllowed(originalTransactionID: String, account: String?) -> Bool { true }
}
