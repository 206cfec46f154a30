import DepotCore
import DepotWire
public import DepotCrypto
public import Foundation
import Synchronization

/// Makes the bearer JWTs of App Store Server API calls (spec §2): header
/// `{"alg":"ES256","kid":KEY_ID,"typ":"JWT"}`, claims `iss`, `iat`, `exp` (`iat` + 300),
/// `aud` `appstoreconnect-v1` and `bid`, an ES256 signature as raw `R‖S`, all base64url.
///
/// A token is reused while more than 60 seconds of it remain, so a busy server signs one every four
/// minutes rather than one per call. "Now" is always a parameter.
public final class ServerAPITokenIssuer: Sendable {
    /// Seconds from `iat` to `exp` (Apple allows at most 60 minutes; the spec asks for 300 s at most).
    public static let lifetime: Int64 = 300
    /// A token is not handed out once this few seconds of it remain.
    public static let reuseMargin: Int64 = 60

    private let key: ServerAPIKey
    private let bundleID: String
    /// The header segment, the same for every token.
    private let headerSegment: String
    private let current = Mutex<(token: String, issuedAt: Int64, expires: Int64)?>(nil)
    private let signatureCount = Atomic<Int>(0)

    /// An issuer signing with `key` for the app `bundleID`.
    public init(key: ServerAPIKey, bundleID: String) {
        self.key = key
        self.bundleID = bundleID
        headerSegment = Base64URL.encode(Array("{\"alg\":\"ES256\",\"kid\":\(JSONText.string(key.keyID)),\"typ\":\"JWT\"}".utf8))
    }

    /// How many tokens were signed so far.
    public var signatures: Int { signatureCount.load(ordering: .relaxed) }

    /// A token valid at `now`: the current one while more than `reuseMargin` seconds of it remain
    /// (and it was not issued in `now`'s future), else a fresh one.
    public func token(now: Date) throws(CryptoError) -> String {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if let reusable = current.withLock({ $0 }), reusable.issuedAt <= seconds, reusable.expires - seconds > Self.reuseMargin {
            return reusable.token
        }
        let token = try sign(issuedAt: seconds)
        current.withLock { $0 = (token, seconds, seconds + Self.lifetime) }
        return token
    }

    /// A freshly signed token issued at `issuedAt` (seconds since 1970).
    public func sign(issuedAt: Int64) throws(CryptoError) -> String {
        let claims = "{\"iss\":\(JSONText.string(key.issuerID)),\"iat\":\(issuedAt),\"exp\":\(issuedAt + Self.lifetime),"
            + "\"aud\":\"appstoreconnect-v1\",\"bid\":\(JSONText.string(bundleID))}"
        let signingInput = headerSegment + "." + Base64URL.encode(Array(claims.utf8))
        let signature: [UInt8]
        do {
            signature = try key.privateKey.signES256(Array(signingInput.utf8))
        } catch let error as CryptoError {
            throw error
        } catch {
            throw CryptoError(operation: "sign the API token", reason: "\(type(of: error))")
        }
        signatureCount.add(1, ordering: .relaxed)
        return signingInput + "." + Base64URL.encode(signature)
    }
}
