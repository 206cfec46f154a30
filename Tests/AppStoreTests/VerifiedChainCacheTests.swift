import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation
import Testing

/// The verifier's cache of validated `x5c` chains: keyed by the exact header text (every certificate's
/// bytes), used only inside the chain's validity window, never holding a failure, bounded.
struct VerifiedChainCacheTests {
    static let bundle = "com.example.depot"
    /// 2026-11-29T10:00:00Z.
    static let purchase = Date(timeIntervalSince1970: 1_795_946_400)

    static func pki(leafValidUntil: Date? = nil) throws -> TestPKI {
        try TestPKI.generate(validFrom: purchase.addingTimeInterval(-86_400 * 30), validUntil: purchase.addingTimeInterval(86_400 * 365),
                             leafValidUntil: leafValidUntil)
    }

    static func jws(_ signer: TransactionSigner, id: String, signedDate: Date = purchase, x5c: [String]? = nil) throws -> String {
        let transaction = TransactionSigner.Transaction(transactionId: id, bundleId: bundle, productId: "com.example.depot.level2",
                                                        purchaseDate: purchase, signedDate: signedDate, environment: "Production")
        let payload = try JSONSerialization.data(withJSONObject: transaction.jsonObject, options: [.sortedKeys])
        return try signer.sign(payloadJSON: Array(payload), x5c: x5c)
    }

    static func verifier(_ pki: TestPKI) -> SignedDataVerifier {
        SignedDataVerifier(trustedRoots: [pki.root], bundleID: bundle, allowSandbox: false)
    }

    /// The second payload under the same header is a hit (no new entry) and still has its own signature
    /// checked: a payload changed after signing fails at `signature`.
    @Test func sameHeaderIsAHitAndEverySignatureIsChecked() throws {
        let pki = try Self.pki()
        let signer = TransactionSigner(pki: pki)
        let verifier = Self.verifier(pki)
        #expect(verifier.cachedHeaderCount == 0)
        #expect(try verifier.verifyTransaction(try Self.jws(signer, id: "1"), now: Self.purchase).get().transactionId == "1")
        #expect(verifier.cachedHeaderCount == 1)
        #expect(try verifier.verifyTransaction(try Self.jws(signer, id: "2"), now: Self.purchase).get().transactionId == "2")
        #expect(verifier.cachedHeaderCount == 1)

        let genuine = try Self.jws(signer, id: "3").split(separator: ".").map(String.init)
        let forged = try Self.jws(signer, id: "4").split(separator: ".").map(String.init)
        let spliced = [genuine[0], forged[1], genuine[2]].joined(separator: ".")
        #expect(verifier.verifyTransaction(spliced, now: Self.purchase).failureCheck == .signature)
    }

    /// One changed byte in a cached certificate is another header: a miss, validated from scratch, refused
    /// (the leaf's own signature no longer matches), and not remembered.
    @Test func aChangedCertificateByteFails() throws {
        let pki = try Self.pki()
        let signer = TransactionSigner(pki: pki)
        let verifier = Self.verifier(pki)
        #expect(throws: Never.self) { try verifier.verifyTransaction(try Self.jws(signer, id: "1"), now: Self.purchase).get() }
        #expect(verifier.cachedHeaderCount == 1)
        for index in 0..<2 {
            var certificate = pki.x5c.map { Array(Data(base64Encoded: $0)!) }
            certificate[index][certificate[index].count - 1] ^= 0x01  // the last byte of the certificate's signature
            var x5c = pki.x5c
            x5c[index] = Data(certificate[index]).base64EncodedString()
            let result = verifier.verifyTransaction(try Self.jws(signer, id: "2", x5c: x5c), now: Self.purchase)
            #expect(result.failureCheck == .chain || result.failureCheck == .certificate, "x5c[\(index)]: \(result)")
            #expect(verifier.cachedHeaderCount == 1)
        }
        // The genuine header still passes after the failures.
        #expect(throws: Never.self) { try verifier.verifyTransaction(try Self.jws(signer, id: "3"), now: Self.purchase).get() }
    }

    /// A cached chain is only used inside its validity window: a payload signed after the leaf expired is
    /// validated again and refused, although its header was cached while the leaf was valid.
    @Test func expiryIsHonouredForACachedChain() throws {
        let leafEnd = Self.purchase.addingTimeInterval(86_400)
        let pki = try Self.pki(leafValidUntil: leafEnd)
        let signer = TransactionSigner(pki: pki)
        let verifier = Self.verifier(pki)
        #expect(throws: Never.self) { try verifier.verifyTransaction(try Self.jws(signer, id: "1"), now: Self.purchase).get() }
        #expect(verifier.cachedHeaderCount == 1)
        let late = verifier.verifyTransaction(try Self.jws(signer, id: "2", signedDate: leafEnd), now: leafEnd)
        #expect(late.failureCheck == .chain)
        #expect(late.failureDetail?.contains("expired") == true)
        let early = verifier.verifyTransaction(try Self.jws(signer, id: "3", signedDate: leafEnd.addingTimeInterval(-1)), now: leafEnd)
        #expect(early.failureCheck == nil)
    }

    /// A chain that fails is never remembered: an untrusted PKI's header fails every time.
    @Test func failuresAreNotCached() throws {
        let trusted = try Self.pki()
        let stranger = TransactionSigner(pki: try Self.pki())
        let verifier = Self.verifier(trusted)
        for id in ["1", "2"] {
            #expect(verifier.verifyTransaction(try Self.jws(stranger, id: id), now: Self.purchase).failureCheck == .chain)
            #expect(verifier.cachedHeaderCount == 0)
        }
    }

    /// The cache never holds more than its capacity.
    @Test func theBoundIsRespected() throws {
        let pki = try Self.pki()
        let chain = try CertificateChainVerifier(trustedRoots: [pki.root]).verify(leaf: pki.leaf, intermediates: [pki.intermediate],
                                                                                  at: Self.purchase).get()
        let cache = VerifiedChainCache(capacity: 3)
        for index in 0..<10 {
            cache.store(VerifiedChainCache.Entry(leaf: pki.leaf, chain: chain), forHeader: Data("header-\(index)".utf8))
            #expect(cache.count <= 3)
            #expect(cache.entry(forHeader: Data("header-\(index)".utf8)) != nil)
        }
        // With the default capacity, 40 different valid PKIs verified through one verifier stay within it.
        let roots = try (0..<40).map { _ in try Self.pki() }
        let verifier = SignedDataVerifier(trustedRoots: roots.map(\.root), bundleID: Self.bundle, allowSandbox: false)
        for (index, each) in roots.enumerated() {
            #expect(throws: Never.self) {
                try verifier.verifyTransaction(try Self.jws(TransactionSigner(pki: each), id: "\(index)"), now: Self.purchase).get()
            }
            #expect(verifier.cachedHeaderCount <= 32)
        }
    }
}
