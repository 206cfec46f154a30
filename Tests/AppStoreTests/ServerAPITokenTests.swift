import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import DepotTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The bearer JWT (spec §2): its exact header and claims, an independent signature check, reuse,
/// its cost; and the simulator refusing every token Apple refuses.
struct ServerAPITokenTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"

    static func issuer(_ key: ECPrivateKey, keyID: String = "2X9R4HXF34") throws -> ServerAPITokenIssuer {
        ServerAPITokenIssuer(key: try ServerAPIKey(keyID: keyID, issuerID: issuer, privateKey: key), bundleID: "com.example.depot")
    }

    @Test func headerClaimsAndSignature() throws {
        let key = try ECPrivateKey.generateP256()
        let token = try Self.issuer(key).sign(issuedAt: 1_795_946_400)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(String(decoding: try #require(Base64URL.decode(parts[0])), as: UTF8.self) == #"{"alg":"ES256","kid":"2X9R4HXF34","typ":"JWT"}"#)
        let claimBytes = try #require(Base64URL.decode(parts[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
        #expect(Set(claims.keys) == ["iss", "iat", "exp", "aud", "bid"])
        #expect(claims["iss"] as? String == Self.issuer)
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_795_946_400)
        #expect((claims["exp"] as? NSNumber)?.int64Value == 1_795_946_700)
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example.depot")
        // Raw R‖S (not DER), verified independently with libcrypto over the ASCII `header.payload`.
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 64)
        try ES256Verifier.verify(signature: signature, message: Array("\(parts[0]).\(parts[1])".utf8), publicKey: key.publicKey)
        var flipped = signature
        flipped[40] ^= 1
        #expect(throws: ES256Verifier.Failure.mismatch) {
            try ES256Verifier.verify(signature: flipped, message: Array("\(parts[0]).\(parts[1])".utf8), publicKey: key.publicKey)
        }
    }

    @Test func tokenIsReusedWhileMoreThanAMinuteRemains() throws {
        let tokens = try Self.issuer(try ECPrivateKey.generateP256())
        let start = Date(timeIntervalSince1970: 1_795_946_400)
        let first = try tokens.token(now: start)
        #expect(try tokens.token(now: start.addingTimeInterval(239)) == first)
        #expect(tokens.signatures == 1)
        let second = try tokens.token(now: start.addingTimeInterval(240))  // exactly 60 s left: not reused
        #expect(second != first && tokens.signatures == 2)
        // A clock that went back never gets a token issued in its future.
        let earlier = try tokens.token(now: start.addingTimeInterval(100))
        #expect(earlier != second && tokens.signatures == 3)
    }

    @Test func signingCost() throws {
        let tokens = try Self.issuer(try ECPrivateKey.generateP256())
        let runs = 2_000
        let cpuBefore = Self.cpuSeconds()
        for index in 0..<runs { _ = try tokens.sign(issuedAt: 1_795_946_400 + Int64(index)) }
        let perSignature = (Self.cpuSeconds() - cpuBefore) / Double(runs)
        let reuseBefore = Self.cpuSeconds()
        for index in 0..<runs { _ = try tokens.token(now: Date(timeIntervalSince1970: 1_795_946_400 + Double(index) / 100)) }
        let perReusedCall = (Self.cpuSeconds() - reuseBefore) / Double(runs)
        print(String(format: "API token: %.1f µs CPU per signature, %.2f µs per call with reuse (%d signatures for %d calls)",
                     perSignature * 1e6, perReusedCall * 1e6, tokens.signatures - runs, runs))
        #expect(tokens.signatures == runs + 1)
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    // MARK: - The simulator checks what Apple checks

    /// A claim's replacement: text, seconds from now, or no claim at all.
    enum Claim: Sendable {
        case text(String)
        case offset(Double)
        case removed
    }

    struct TokenCase: Sendable, CustomTestStringConvertible {
        var name: String
        var header: [String: String] = [:]
        var claims: [String: Claim] = [:]
        var signWithOtherKey = false
        var refusal: String?
        var testDescription: String { name }
    }

    static let tokenCases: [TokenCase] = [
        TokenCase(name: "a good token", refusal: nil),
        TokenCase(name: "without typ", header: ["typ": ""], refusal: nil),
        TokenCase(name: "unknown kid", header: ["kid": "UNKNOWN123"], refusal: "kid names no key of this issuer"),
        TokenCase(name: "alg HS256", header: ["alg": "HS256"], refusal: "alg is not ES256"),
        TokenCase(name: "typ JWS", header: ["typ": "JWS"], refusal: "typ is not JWT"),
        TokenCase(name: "signed by another key", signWithOtherKey: true, refusal: "signature: signature does not match"),
        TokenCase(name: "another issuer", claims: ["iss": .text("00000000-0000-0000-0000-000000000000")], refusal: "iss is not the key's issuer"),
        TokenCase(name: "wrong audience", claims: ["aud": .text("appstoreconnect-v2")], refusal: "aud is not appstoreconnect-v1"),
        TokenCase(name: "another app", claims: ["bid": .text("com.example.other")], refusal: "bid is not the app's bundle ID"),
        TokenCase(name: "iat in the future", claims: ["iat": .offset(120), "exp": .offset(400)], refusal: "iat is in the future"),
        TokenCase(name: "expired", claims: ["iat": .offset(-400), "exp": .offset(-100)], refusal: "the token has expired"),
        TokenCase(name: "living 61 minutes", claims: ["iat": .offset(-60), "exp": .offset(3600)], refusal: "exp is more than 60 minutes after iat"),
        TokenCase(name: "living 60 minutes", claims: ["iat": .offset(-60), "exp": .offset(3540)], refusal: nil),
        TokenCase(name: "fractional iat", claims: ["iat": .offset(-0.5)], refusal: "a claim has the wrong type (iat and exp are whole seconds)"),
        TokenCase(name: "no exp", claims: ["exp": .removed], refusal: "iat or exp is missing"),
    ]

    @Test(arguments: tokenCases)
    func simulatorRefusesWhatAppleRefuses(_ example: TokenCase) async throws {
        let store = try SimulatedAppStore(bundleID: "com.example.depot")
        let key = store.serverAPI.key
        let purchase = store.serverAPI.purchase("com.example.depot.level2")
        var header: [String: Any] = ["alg": "ES256", "kid": key.keyID, "typ": "JWT"]
        for (name, value) in example.header { header[name] = value.isEmpty ? nil : value }
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: Any] = ["iss": key.issuerID, "iat": now, "exp": now + 300, "aud": "appstoreconnect-v1", "bid": "com.example.depot"]
        for (name, value) in example.claims {
            switch value {
            case .text(let text): claims[name] = text
            case .offset(let seconds) where seconds == seconds.rounded(): claims[name] = now + Int64(seconds)
            case .offset(let seconds): claims[name] = Double(now) + seconds
            case .removed: claims[name] = nil
            }
        }
        let input = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: header)))
            + "." + Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: claims)))
        let signer = example.signWithOtherKey ? try ECPrivateKey.generateP256() : key.privateKey
        let token = input + "." + Base64URL.encode(try signer.signES256(Array(input.utf8)))

        var request = URLRequest(url: store.apiURL.appendingPathComponent("inApps/v1/transactions/\(purchase.transactionID)"))
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode
        #expect(status == (example.refusal == nil ? 200 : 401))
        #expect(store.serverAPI.authenticationFailures == (example.refusal.map { [$0] } ?? []))
        await store.stop()
    }

    @Test func requestWithoutATokenIsRefused() async throws {
        let store = try SimulatedAppStore(bundleID: "com.example.depot")
        let (_, response) = try await URLSession.shared.data(from: store.apiURL.appendingPathComponent("inApps/v1/transactions/1"))
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(store.serverAPI.authenticationFailures == ["no bearer token"])
        await store.stop()
    }
}
