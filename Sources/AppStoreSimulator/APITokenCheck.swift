import DepotCrypto
import Foundation

/// What the App Store checks on the bearer JWT of every Server API call: ES256 over
/// `header.payload` with the public key of the key named by `kid`, `typ` JWT when present, and the
/// claims `iss` (that key's issuer), `aud` `appstoreconnect-v1`, `bid` (the app), an `iat` not in
/// the future and an `exp` after now and at most 60 minutes after `iat`. Any failure is Apple's `401`.
/// A token accepted before (`AcceptedTokenCache`, its exact text) is checked again for its key and its
/// time window only: the rest follows from the text.
enum APITokenCheck {
    /// Seconds an `iat` may run ahead of the store's clock (whole-second rounding).
    static let clockAllowance: Int64 = 1
    /// Apple refuses tokens that live longer than this.
    static let longestLifetime: Int64 = 3600

    /// Nil when `authorization` carries an acceptable token; otherwise why not. A token `accepted` already
    /// holds (the exact text) is only checked for what can change since: its key and its time window.
    static func failure(authorization: String?, keys: [String: SimulatedAPIKey], bundleID: String, now: Date,
                        accepted: AcceptedTokenCache? = nil) -> String? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return "no bearer token" }
        let token = authorization.dropFirst("Bearer ".count)
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if let accepted, let entry = accepted.entry(for: token) {
            // The key that verified it is still the one `kid` names: only the time can have changed. (A key
            // revoked or replaced since sends the token through every check again, with the same refusal.)
            if keys[entry.keyID]?.privateKey === entry.key {
                if let failure = timeFailure(issuedAt: entry.issuedAt, expires: entry.expires, nowSeconds: seconds) {
                    accepted.forget(token)
                    return failure
                }
                return nil
            }
            accepted.forget(token)
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = decode(parts[0]), let claimBytes = decode(parts[1]),
              let signature = decode(parts[2]) else { return "not a compact JWS" }
        guard let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
              (try? JSONSerialization.jsonObject(with: Data(claimBytes))) is [String: Any] else {
            return "header or claims are not JSON objects"
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes)) else {
            return "a claim has the wrong type (iat and exp are whole seconds)"
        }
        guard header["alg"] as? String == "ES256" else { return "alg is not ES256" }
        if let type = header["typ"], type as? String != "JWT" { return "typ is not JWT" }
        guard let keyID = header["kid"] as? String, let key = keys[keyID] else { return "kid names no key of this issuer" }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        do {
            try ES256Verifier.verify(signature: signature, message: signingInput, publicKey: key.privateKey.publicKey)
        } catch {
            return "signature: \(error)"
        }
        guard claims.iss == key.issuerID else { return "iss is not the key's issuer" }
        guard claims.aud == "appstoreconnect-v1" else { return "aud is not appstoreconnect-v1" }
        guard claims.bid == bundleID else { return "bid is not the app's bundle ID" }
        guard let issuedAt = claims.iat, let expires = claims.exp else { return "iat or exp is missing" }
        if let failure = timeFailure(issuedAt: issuedAt, expires: expires, nowSeconds: seconds) { return failure }
        accepted?.remember(token, AcceptedTokenCache.Entry(keyID: keyID, key: key.privateKey, issuedAt: issuedAt, expires: expires),
                           nowSeconds: seconds)
        return nil
    }

    /// The checks of `iat` and `exp` against the store's clock (whole seconds).
    private static func timeFailure(issuedAt: Int64, expires: Int64, nowSeconds seconds: Int64) -> String? {
        guard issuedAt <= seconds + clockAllowance else { return "iat is in the future" }
        guard expires > seconds else { return "the token has expired" }
        guard expires - issuedAt <= longestLifetime else { return "exp is more than 60 minutes after iat" }
        return nil
    }

    /// The claims Apple reads.
    private struct Claims: Decodable {
        var iss: String?
        var aud: String?
        var bid: String?
        var iat: Int64?
        var exp: Int64?
    }

    /// Unpadded base64url: mapped byte by byte to padded standard base64 for `Data(base64Encoded:)` (an `=` is
    /// refused; `replacingOccurrences` went through `NSString` on every call).
    static func decode(_ text: Substring) -> [UInt8]? {
        var base64: [UInt8] = []
        base64.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "="): return nil
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            default: base64.append(byte)
            }
        }
        while base64.count % 4 != 0 { base64.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(base64)).map(Array.init)
    }
}
