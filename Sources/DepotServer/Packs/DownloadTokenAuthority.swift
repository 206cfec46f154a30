import DepotCore
import DepotCrypto
import HTTP

/// Why a token was refused (spec §4.3).
enum TokenRejection: Error, Equatable {
    case missing
    case invalid
    case expired
    case wrongPack
    case revoked

    var apiError: APIError {
        var error = plainError
        // RFC 9110 §11.6.1: a 401 carries a challenge; RFC 6750 §3 gives its form for bearer tokens.
        if error.status == 401 {
            error.headers.append("WWW-Authenticate", self == .missing ? "Bearer" : "Bearer error=\"invalid_token\"")
        }
        return error
    }

    private var plainError: APIError {
        switch self {
        case .missing: APIError(401, "token_missing", "A download token is required (Authorization: Bearer or ?token=).")
        case .invalid: APIError(401, "token_invalid", "The download token is malformed or its signature does not match.")
        case .expired: APIError(401, "token_expired", "The download token has expired: validate the purchase again for a fresh token; the download can resume.")
        case .wrongPack: APIError(403, "token_wrong_pack", "The download token is for another pack.")
        case .revoked: APIError(403, "revoked", "The purchase behind this token was refunded or revoked.")
        }
    }
}

/// Issues and checks download tokens: `base64url(payload).base64url(HMAC-SHA256(key, payload))`.
struct DownloadTokenAuthority: Sendable {
    let key: [UInt8]

    func issue(_ claims: DownloadTokenClaims) -> String {
        let payload = claims.payload()
        return Base64URL.encode(payload) + "." + Base64URL.encode(HMACSHA256.authenticate(payload, key: key))
    }

    /// Checks the signature (constant time), then the expiry against `now` (seconds since 1970).
    func verify(_ token: String, now: Int64) -> Result<DownloadTokenClaims, TokenRejection> {
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
protocol AccessChecker: Sendable {
    /// `false` when the original transaction was revoked, or moved to another account.
    func isAllowed(originalTransactionID: String, account: String?) -> Bool
}

/// Nothing is revoked (no ledger configured).
struct AllowAllAccess: AccessChecker {
    func isAllowed(originalTransactionID: String, account: String?) -> Bool { true }
}
