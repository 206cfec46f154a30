import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// What the simulated Server API reuses between calls (an accepted token, a transaction's signed form)
/// never lets through what a fresh check refuses, and never serves a stale transaction.
struct SimulatedServerAPIReuseTests {
    static let bundle = "com.example.depot"

    /// A store whose clock the test moves.
    final class Clock: Sendable {
        let time = Mutex(Date())
        func advance(_ seconds: Double) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var now: Date { time.withLock { $0 } }
    }

    /// The status and body of `GET path` (below the store's production API) with `token`.
    static func get(_ store: SimulatedAppStore, _ path: String, token: String) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: store.apiURL.appendingPathComponent(path))
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    /// A token as Depot signs it, issued at the store's time.
    static func token(for key: SimulatedAPIKey, at date: Date) throws -> String {
        try ServerAPITokenIssuer(key: try ServerAPIKey(keyID: key.keyID, issuerID: key.issuerID, privateKey: key.privateKey),
                                 bundleID: bundle).sign(issuedAt: Int64(date.timeIntervalSince1970))
    }

    /// `token` with the byte at `index` replaced by another character of the base64url alphabet.
    static func altered(_ token: String, at index: Int) -> String {
        var bytes = Array(token.utf8)
        bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aTokenOneByteFromAnAcceptedOneIsCheckedAfresh() async throws {
        let store = try SimulatedAppStore(bundleID: Self.bundle)
        let purchase = store.serverAPI.purchase("com.example.depot.level2")
        let path = "inApps/v1/transactions/\(purchase.transactionID)"
        let token = try Self.token(for: store.serverAPI.key, at: Date())
        #expect(try await Self.get(store, path, token: token).status == 200)
        #expect(store.serverAPI.acceptedTokenCount == 1)
        #expect(try await Self.get(store, path, token: token).status == 200)  // now from the accepted tokens

        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(\.utf8.count)
        let inSignature = parts[0] + 1 + parts[1] + 1 + 10
        let inClaims = parts[0] + 1 + 5
        let inHeader = 3
        for index in [inSignature, inClaims, inHeader] {
            #expect(try await Self.get(store, path, token: Self.altered(token, at: index)).status == 401)
        }
        #expect(try await Self.get(store, path, token: token + "A").status == 401)
        #expect(try await Self.get(store, path, token: String(token.dropLast())).status == 401)
        let refusals = store.serverAPI.authenticationFailures
        #expect(refusals.count == 5)
        // The signature byte changed: the full check ran and refused the signature.
        #expect(refusals.first == "signature: signature does not match")
        #expect(refusals.last == "not a compact JWS")
        #expect(store.serverAPI.acceptedTokenCount == 1)
        #expect(try await Self.get(store, path, token: token).status == 200)
        await store.stop()
    }

    @Test func anAcceptedTokenIsRefusedOnceExpiredOrItsKeyIsRevoked() async throws {
        let clock = Clock()
        let store = try SimulatedAppStore(bundleID: Self.bundle, now: { clock.now })
        let purchase = store.serverAPI.purchase("com.example.depot.level2")
        let path = "inApps/v1/transactions/\(purchase.transactionID)"
        let token = try Self.token(for: store.serverAPI.key, at: clock.now)  // lives 300 s
        #expect(try await Self.get(store, path, token: token).status == 200)
        clock.advance(299)
        #expect(try await Self.get(store, path, token: token).status == 200)
        clock.advance(2)
        #expect(try await Self.get(store, path, token: token).status == 401)
        #expect(store.serverAPI.authenticationFailures == ["the token has expired"])

        let other = try SimulatedAPIKey.generate(issuerID: store.serverAPI.key.issuerID)
        store.serverAPI.accept(other)
        let otherToken = try Self.token(for: other, at: clock.now)
        #expect(try await Self.get(store, path, token: otherToken).status == 200)
        #expect(try await Self.get(store, path, token: otherToken).status == 200)
        // Another key under the same ID is not the key that verified the token: checked afresh, refused.
        store.serverAPI.accept(try SimulatedAPIKey(keyID: other.keyID, issuerID: other.issuerID, privateKey: ECPrivateKey.generateP256()))
        #expect(try await Self.get(store, path, token: otherToken).status == 401)
        store.serverAPI.accept(other)
        #expect(try await Self.get(store, path, token: otherToken).status == 200)
        store.serverAPI.revokeKey(other.keyID)
        #expect(try await Self.get(store, path, token: otherToken).status == 401)
        #expect(store.serverAPI.authenticationFailures
            == ["the token has expired", "signature: signature does not match", "kid names no key of this issuer"])
        await store.stop()
    }

    @Test func aTransactionIsSignedOnceWhileItIsUnchanged() async throws {
        let store = try SimulatedAppStore(bundleID: Self.bundle)
        let api = store.serverAPI
        let purchase = api.purchase("com.example.depot.level2", customer: "c1")
        let path = "inApps/v2/history/\(purchase.transactionID)"
        let token = try Self.token(for: api.key, at: Date())
        let first = try Self.signedTransactions(try await Self.get(store, path, token: token).body)
        let second = try Self.signedTransactions(try await Self.get(store, path, token: token).body)
        #expect(first.count == 1 && first == second)

        // A refund changes the transaction: the next answer carries a new signature with the revocation.
        api.refund(purchase.transactionID)
        let refunded = try Self.signedTransactions(try await Self.get(store, path, token: token).body)
        #expect(refunded.count == 1 && refunded != first)
        let verifier = SignedDataVerifier(trustedRoots: [api.pki.root], bundleID: Self.bundle, allowSandbox: true)
        #expect(try verifier.verifyTransaction(first[0], now: Date()).get().revocationDate == nil)
        #expect(try verifier.verifyTransaction(refunded[0], now: Date()).get().revocationDate != nil)
        #expect(try Self.signedTransactions(try await Self.get(store, path, token: token).body) == refunded)

        // A renewal is a new transaction, signed when it is registered.
        let subscription = api.purchase("com.example.depot.monthly", type: .autoRenewable, customer: "c2",
                                        expiresDate: Date().addingTimeInterval(-60))
        let renewal = try #require(api.renew(subscription.originalTransactionID, expiresDate: Date().addingTimeInterval(3600)))
        let history = try Self.signedTransactions(try await Self.get(store, "inApps/v2/history/\(renewal.transactionID)", token: token).body)
        let decoded = try history.map { try verifier.verifyTransaction($0, now: Date()).get() }
        #expect(decoded.map(\.transactionId) == [subscription.transactionID, renewal.transactionID])
        #expect(decoded.last?.transactionReason == "RENEWAL")
        await store.stop()
    }

    @Test func aReplacementStillWinsOverTheSignedCopy() async throws {
        let store = try SimulatedAppStore(bundleID: Self.bundle)
        let purchase = store.serverAPI.purchase("com.example.depot.level2")
        let token = try Self.token(for: store.serverAPI.key, at: Date())
        store.serverAPI.replaceSignedTransaction(purchase.transactionID, with: "a.b.c")
        let body = try await Self.get(store, "inApps/v1/transactions/\(purchase.transactionID)", token: token).body
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["signedTransactionInfo"] as? String == "a.b.c")
        await store.stop()
    }

    static func signedTransactions(_ body: Data) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        return try #require(object["signedTransactions"] as? [String])
    }
}
