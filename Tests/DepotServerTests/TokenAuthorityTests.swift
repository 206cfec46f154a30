import ArgumentParsing
import DepotCore
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// spec §4.3: `base64url(payload).base64url(HMAC-SHA256(key, payload))`, checked without the network.
@Suite struct TokenAuthorityTests {
    static let key = Array("test-secret-test-secret-test-secret-0123".utf8)
    static let authority = DownloadTokenAuthority(key: key)
    static let now: Int64 = 1_780_000_000
    static let claims = DownloadTokenClaims(pack: "level2", originalTransactionID: "2000000123456789", account: "acc-1",
                                            expires: now + 3600)
    static let token = authority.issue(claims)
    static let payloadPart = String(token.split(separator: ".")[0])
    static let signaturePart = String(token.split(separator: ".")[1])

    @Test func roundTrip() throws {
        let verified = try Self.authority.verify(Self.token, now: Self.now).get()
        #expect(verified == Self.claims)
    }

    @Test func tokenIsTwoBase64URLPartsAndASignatureOverThePayload() throws {
        let parts = Self.token.split(separator: ".")
        #expect(parts.count == 2)
        let payload = try #require(Base64URL.decode(parts[0]))
        #expect(payload == Self.claims.payload())
        let tag = try #require(Base64URL.decode(parts[1]))
        #expect(tag == HMACSHA256.authenticate(payload, key: Self.key))
        #expect(Self.token.utf8.allSatisfy { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
            || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
    }

    /// Every position of the token, replaced by every other character that could appear in a token: refused
    /// as invalid. (Includes the last character of each part, whose low bits are padding in base64.)
    @Test func everyChangedCharacterIsRefused() {
        let characters = Array(Self.token.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+/=".utf8)
        var accepted: [String] = []
        for position in characters.indices {
            for replacement in alphabet where replacement != characters[position] {
                var changed = characters
                changed[position] = replacement
                let text = String(decoding: changed, as: UTF8.self)
                if case .success = Self.authority.verify(text, now: Self.now) { accepted.append(text) }
                if case .failure(let rejection) = Self.authority.verify(text, now: Self.now), rejection != .invalid {
                    accepted.append("\(text): \(rejection)")
                }
            }
        }
        #expect(accepted.isEmpty, "\(accepted.prefix(5))")
    }

    static let malformed: [String] = [
        "",
        ".",
        "abc",
        token + ".",
        "." + token,
        token + "." + signaturePart,
        token.replacingOccurrences(of: ".", with: ""),
        token + "=",
        payloadPart + ".",
        "." + signaturePart,
        " " + token,
        token + " ",
        payloadPart + ".+" + signaturePart.dropFirst(),          // standard base64 characters are not base64url
        payloadPart + "./" + signaturePart.dropFirst(),
        String(repeating: "A", count: 5000) + "." + signaturePart,
        // A correctly signed payload that is not a claims object.
        Base64URL.encode(Array("[]".utf8)) + "." + Base64URL.encode(HMACSHA256.authenticate(Array("[]".utf8), key: key)),
        // A truncated signature.
        payloadPart + "." + Base64URL.encode(HMACSHA256.authenticate(claims.payload(), key: key).prefix(16)),
    ]

    @Test(arguments: malformed)
    func malformedIsInvalid(_ token: String) {
        #expect(Self.authority.verify(token, now: Self.now) == .failure(.invalid))
    }

    @Test func anotherKeyIsInvalid() {
        let other = DownloadTokenAuthority(key: Array("another-secret-another-secret-another-1".utf8))
        #expect(other.verify(Self.token, now: Self.now) == .failure(.invalid))
    }

    /// `expires` is the first second at which the token is refused.
    @Test(arguments: [(Int64(3600), true), (1, true), (0, false), (-1, false), (-86_400, false)])
    func expiry(_ expiresInSeconds: Int64, valid: Bool) {
        let claims = DownloadTokenClaims(pack: "p", originalTransactionID: "t", account: nil, expires: Self.now + expiresInSeconds)
        let result = Self.authority.verify(Self.authority.issue(claims), now: Self.now)
        #expect(result == (valid ? .success(claims) : .failure(.expired)))
    }

    @Test func expiredAndForgedIsInvalidNotExpired() {
        let claims = DownloadTokenClaims(pack: "p", originalTransactionID: "t", account: nil, expires: 1)
        let forged = Base64URL.encode(claims.payload()) + "." + Base64URL.encode([UInt8](repeating: 0, count: 32))
        #expect(Self.authority.verify(forged, now: Self.now) == .failure(.invalid))
    }

    /// `depot token` signs with the configured secret: its token verifies here.
    @Test func operatorTokenFromTheCommandLine() async throws {
        let data = TemporaryDirectory("token-cli")
        let result = try await ProcessRunner.run(ProcessRunner.depotExecutable, [
            "token", "--pack", "level2", "--ttl", "600", "--data", data.path,
            "--token-secret", String(decoding: Self.key, as: UTF8.self),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let token = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let now = Int64(Date().timeIntervalSince1970)
        let claims = try Self.authority.verify(token, now: now).get()
        #expect(claims.pack == "level2")
        #expect(claims.expires > now + 500 && claims.expires <= now + 601)
        #expect(claims.account == nil)
    }

    @Test func operatorTokensUseTheDataDirectoryKeyWithoutASecret() throws {
        let data = TemporaryDirectory("token-key")
        // Issue 11: without a key there is nothing to sign with that a server would accept: refused, nothing created.
        #expect(throws: ConfigurationError.self) {
            try OperatorTokens.issue(pack: "level3", ttl: 60, account: nil, secret: nil, dataDirectory: data.path)
        }
        #expect(!FileManager.default.fileExists(atPath: data.path + "/token.key"))
        // The server creates the key on its first start; the operator's token is signed with it.
        let key = try TokenKey.load(secret: nil, dataDirectory: data.path)
        let token = try OperatorTokens.issue(pack: "level3", ttl: 60, account: "support", secret: nil, dataDirectory: data.path)
        #expect(key.count == 32)
        let claims = try DownloadTokenAuthority(key: key).verify(token, now: Int64(Date().timeIntervalSince1970)).get()
        #expect(claims.pack == "level3")
        #expect(claims.account == "support")
        // The key file is private.
        let attributes = try FileManager.default.attributesOfItem(atPath: data.path + "/token.key")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(DownloadTokenAuthority(key: Self.key).verify(token, now: Int64(Date().timeIntervalSince1970)) == .failure(.invalid))
    }

    @Test(arguments: ["short", String(repeating: "x", count: 31)])
    func shortSecretIsRefused(_ secret: String) {
        #expect(throws: TokenKey.Failure.self) { try TokenKey.load(secret: secret, dataDirectory: "/nonexistent") }
    }
}
