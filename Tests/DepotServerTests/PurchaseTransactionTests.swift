import ArgumentParsing
import AppStoreSimulator
import DepotCore
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// `POST /v1/receipts` with StoreKit 2 signed transactions, verified locally against the configured root
/// (spec §4.2 `transactions`): every check named by `"check"` in the `422`.
@Suite struct PurchaseTransactionTests {
    /// The test PKI the server trusts, in its variants.
    enum Authority: Sendable {
        case standard
        case leafWithoutAppleOID
        case intermediateWithoutAppleOID
        /// The leaf expired yesterday; root and intermediate are still valid.
        case leafExpiredYesterday

        func generate() throws -> TestPKI {
            let now = Date()
            let year: TimeInterval = 365 * 86_400
            return try TestPKI.generate(
                validFrom: now.addingTimeInterval(-year), validUntil: now.addingTimeInterval(year),
                leafValidUntil: self == .leafExpiredYesterday ? now.addingTimeInterval(-86_400) : nil,
                leafCarriesAppleOID: self != .leafWithoutAppleOID,
                intermediateCarriesAppleOID: self != .intermediateWithoutAppleOID)
        }
    }

    /// One refused transaction: how it is made, and the check that must refuse it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var authority: Authority = .standard
        var allowSandbox = true
        var check: String
        var make: @Sendable (TransactionSigner) throws -> String

        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "a flipped payload byte", check: "signature") { signer in
            try Self.flipTransactionIDBit(try signer.signedTransaction(PurchaseFixture.transaction()))
        },
        Refusal(name: "another app's bundle", check: "bundle") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction(bundleId: "com.example.other"))
        },
        Refusal(name: "x5c with 2 certificates", check: "chain_length") { signer in
            try signer.sign(payloadJSON: Self.payload(PurchaseFixture.transaction()), x5c: Array(signer.pki.x5c.prefix(2)))
        },
        Refusal(name: "x5c with 4 certificates", check: "chain_length") { signer in
            try signer.sign(payloadJSON: Self.payload(PurchaseFixture.transaction()), x5c: signer.pki.x5c + [signer.pki.x5c[2]])
        },
        Refusal(name: "alg HS256", check: "algorithm") { signer in
            try signer.sign(payloadJSON: Self.payload(PurchaseFixture.transaction()), alg: "HS256")
        },
        Refusal(name: "x5c[0] not base64 DER", check: "certificate") { signer in
            try signer.sign(payloadJSON: Self.payload(PurchaseFixture.transaction()),
                            x5c: ["bm90IGEgY2VydGlmaWNhdGU="] + signer.pki.x5c.dropFirst())
        },
        Refusal(name: "leaf without the Apple OID", authority: .leafWithoutAppleOID, check: "oid") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction())
        },
        Refusal(name: "intermediate without the Apple OID", authority: .intermediateWithoutAppleOID, check: "oid") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction())
        },
        Refusal(name: "leaf expired at signedDate", authority: .leafExpiredYesterday, check: "chain") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction())
        },
        Refusal(name: "signed by an untrusted PKI", check: "chain") { _ in
            try TransactionSigner(pki: try Authority.standard.generate()).signedTransaction(PurchaseFixture.transaction())
        },
        Refusal(name: "Sandbox with sandbox off", allowSandbox: false, check: "environment") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction(environment: "Sandbox"))
        },
        Refusal(name: "Xcode environment", check: "environment") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction(environment: "Xcode"))
        },
        Refusal(name: "LocalTesting environment", check: "environment") { signer in
            try signer.signedTransaction(PurchaseFixture.transaction(environment: "LocalTesting"))
        },
        Refusal(name: "garbage segments", check: "format") { _ in "abc.def.ghi" },
        Refusal(name: "two segments", check: "format") { _ in "eyJhbGciOiJFUzI1NiJ9.e30" },
    ]

    @Test(arguments: refusals)
    func refusedTransaction(_ refusal: Refusal) async throws {
        let pki = try refusal.authority.generate()
        try await PurchaseFixture.run(pki: pki, configure: { $0.allowSandbox = refusal.allowSandbox }) { fixture in
            let jws = try refusal.make(fixture.signer)
            let response = try await fixture.postTransactions([jws])
            #expect(response.status == 422, "\(response.summary)")
            #expect(response.errorCode == "receipt_invalid")
            #expect(response.object["check"] as? String == refusal.check, "\(response.summary)")
            #expect(response.object["appleStatus"] == nil)
        }
    }

    @Test(arguments: ["Production", "Sandbox"])
    func validTransactionGrantsItsPack(environment: String) async throws {
        try await PurchaseFixture.run { fixture in
            let transaction = PurchaseFixture.transaction(environment: environment)
            let response = try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)])
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.object["environment"] as? String == environment)
            try #require(response.entitlements.count == 1)
            let entitlement = response.entitlements[0]
            #expect(entitlement["productId"] as? String == PurchaseFixture.level2)
            #expect(entitlement["pack"] as? String == "level2")
            #expect(entitlement["transactionId"] as? String == transaction.transactionId)
            #expect(entitlement["originalTransactionId"] as? String == transaction.originalTransactionId)
            #expect(entitlement["expiresDate"] is NSNull)
            let token = try #require(response.token)
            #expect(try await fixture.packStatus("level2", token: token).status == 307)
        }
    }

    /// Spec §4.2: the chain is valid **at the payload's `signedDate`**; a leaf that expired since still
    /// verifies a transaction it signed while valid.
    @Test func leafExpiredSinceSigningStillVerifies() async throws {
        try await PurchaseFixture.run(pki: try Authority.leafExpiredYesterday.generate()) { fixture in
            let signed = Date().addingTimeInterval(-2 * 86_400)
            let transaction = PurchaseFixture.transaction(signedDate: PurchaseFixture.wholeSeconds(signed))
            let response = try await fixture.postTransactions([try fixture.signer.signedTransaction(transaction)])
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.count == 1)
        }
    }

    /// Spec §4.2: a subscription grants only while `expires` is in the future, so one without an expiry
    /// date (a subscription product in the catalog, whatever the payload claims) grants nothing.
    @Test func aSubscriptionWithoutAnExpiryGrantsNothing() async throws {
        try await PurchaseFixture.run { fixture in
            let signed = try fixture.signer.signedTransaction(PurchaseFixture.transaction(PurchaseFixture.seasonPass))
            let response = try await fixture.postTransactions([signed])
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.isEmpty)
            #expect(response.rejections == [Rejection(product: PurchaseFixture.seasonPass, reason: "expired")])
            let receipt = try await fixture.postReceipt(fixture.apple.issueReceipt([PurchaseFixture.purchase(PurchaseFixture.seasonPass)]))
            #expect(receipt.entitlements.isEmpty, "\(receipt.summary)")
            #expect(receipt.rejections == [Rejection(product: PurchaseFixture.seasonPass, reason: "expired")])
        }
    }

    @Test func everyTransactionOfARequestIsJudged() async throws {
        try await PurchaseFixture.run { fixture in
            let subscription = PurchaseFixture.transaction(PurchaseFixture.seasonPass, expires: Date().addingTimeInterval(86_400))
            let refunded = PurchaseFixture.transaction(PurchaseFixture.level2, revoked: Date().addingTimeInterval(-60))
            let lapsed = PurchaseFixture.transaction(PurchaseFixture.seasonPass, expires: Date().addingTimeInterval(-60))
            let coins = PurchaseFixture.transaction(PurchaseFixture.coins)
            let list = try [subscription, refunded, lapsed, coins].map(fixture.signer.signedTransaction)
            let response = try await fixture.postTransactions(list)
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.entitlements.map { $0["transactionId"] as? String } == [subscription.transactionId])
            #expect(response.entitlements.first?["pack"] as? String == "level3")
            #expect(response.rejections == [
                Rejection(product: PurchaseFixture.level2, reason: "revoked"),
                Rejection(product: PurchaseFixture.seasonPass, reason: "expired"),
                Rejection(product: PurchaseFixture.coins, reason: "no_pack"),
            ])

            // One bad transaction among good ones refuses the request, naming it.
            var mixed = list
            mixed[1] = try Self.flipTransactionIDBit(list[1])
            let refused = try await fixture.postTransactions(mixed)
            #expect(refused.status == 422)
            #expect(refused.object["check"] as? String == "signature")
            #expect(refused.errorMessage?.contains("transactions[1]") == true)
        }
    }

    /// A real Apple-signed StoreKit 2 transaction (a Sandbox consumable for `com.goodheartapp`, signed in
    /// February 2025 by a leaf that expired in October 2025), verified with the shipped Apple root at its
    /// `signedDate`. Provenance: Tests/AppStoreTests/Fixtures/PROVENANCE.md (mingos/app_store_server_api).
    @Test func realAppleTransactionIsVerified() async throws {
        let path = TestDepot.repositoryRoot + "/Tests/AppStoreTests/Fixtures/real-jws/mingos-consumable-transaction.jws"
        let jws = String(decoding: try #require(FileManager.default.contents(atPath: path)), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try await PurchaseFixture.run(configure: { configuration in
            configuration.bundleID = "com.goodheartapp"
            configuration.appleRootCertificateFiles = nil
        }) { fixture in
            let response = try await fixture.postTransactions([jws])
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.object["environment"] as? String == "Sandbox")
            #expect(response.entitlements.isEmpty)
            #expect(response.rejections == [Rejection(product: "gh_super_good_ticket_1", reason: "unknown_product")])
            #expect(response.rejected.first?["transactionId"] as? String == "2000000847061981")
        }
        // The same transaction for this server's bundle is refused at the bundle check.
        try await PurchaseFixture.run(configure: { $0.appleRootCertificateFiles = nil }) { fixture in
            let response = try await fixture.postTransactions([jws])
            #expect(response.status == 422)
            #expect(response.object["check"] as? String == "bundle")
        }
    }

    /// `--apple-root-certs` takes several files, PEM or DER: each root is trusted.
    @Test func everyConfiguredRootIsTrusted() async throws {
        let other = try Authority.standard.generate()
        let files = TemporaryDirectory("depot-roots")
        files.write("other.der", other.rootDER)
        let otherFile = files.path + "/other.der"
        try await PurchaseFixture.run(configure: { $0.appleRootCertificateFiles?.append(otherFile) }) { fixture in
            for signer in [fixture.signer, TransactionSigner(pki: other)] {
                let response = try await fixture.postTransactions([try signer.signedTransaction(PurchaseFixture.transaction())])
                #expect(response.status == 200, "\(response.summary)")
                #expect(response.entitlements.count == 1)
            }
        }
    }

    /// A root file that cannot be used stops start-up, naming the option (spec §3).
    @Test(arguments: ["missing", "garbage"])
    func unusableRootFileStopsStartUp(kind: String) async throws {
        let files = TemporaryDirectory("depot-roots")
        files.write("garbage.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
        let path = files.path + (kind == "missing" ? "/missing.pem" : "/garbage.pem")
        do {
            try await PurchaseFixture.run(configure: { $0.appleRootCertificateFiles = [path] }) { _ in
                Issue.record("the server started with an unusable root file")
            }
        } catch let error as ConfigurationError {
            #expect(error.option == "apple-root-certs")
            #expect(error.message.contains(path))
        }
    }

    // MARK: - Building tokens

    static func payload(_ transaction: TransactionSigner.Transaction) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: transaction.jsonObject, options: [.sortedKeys]))
    }

    /// Flips the lowest bit of the last digit of `transactionId` in the payload (still valid JSON, still a
    /// digit), keeping the header and signature.
    static func flipTransactionIDBit(_ jws: String) throws -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var payload = try #require(Base64URL.decode(parts[1]))
        let text = String(decoding: payload, as: UTF8.self)
        let key = try #require(text.range(of: "\"transactionId\":\""))
        let end = try #require(text[key.upperBound...].firstIndex(of: "\""))
        let offset = text.utf8.distance(from: text.startIndex, to: end) - 1
        payload[offset] ^= 0x01
        return [parts[0], Base64URL.encode(payload), parts[2]].joined(separator: ".")
    }
}
