import AppStore
import AppStoreSimulator
import DepotCore
import Foundation
import Testing

/// No JWT, key, receipt or token in anything these modules report (spec §1, §2): a run through
/// every endpoint and failure collects every reason and observer line and greps them.
struct ServerAPISecretsTests {
    @Test func reasonsAndObserverLinesHoldNoSecret() async throws {
        // Each call gets 5 s (0.3 s was outrun by ordinary answers on a loaded machine); the delayed answers below
        // wait a minute, far past it (stopping the store releases them), so those attempts still time out.
        try await ServerAPIHarness.run(timeout: 5) { h in
            var reported: [String] = []
            var secrets: [String] = []
            let purchase = h.api.purchase("com.example.depot.level2", customer: "ada")
            let receipt = try h.api.appReceipt(for: "ada")
            secrets.append(receipt)
            secrets.append(try h.client.tokens.token(now: Date()))
            secrets += h.api.key.pkcs8PEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            let validator = ServerAPIReceiptValidator(client: h.client, cacheLifetime: 0)

            // Each failure as often as the client asks (retryable ones twice).
            for (failure, times) in [(SimulatedFailure.generalInternalRetryable, 2), (.rateLimited(retryAfter: 30), 1), (.httpStatus(403), 1),
                                     (.error(httpStatus: 400, errorCode: 4_000_006), 1), (.delay(seconds: 60), 2)] {
                h.api.failNext(times, with: failure)
                reported.append("\(await validator.validate(receipt: receipt, now: Date()))")
            }
            h.api.notificationURL = URL(string: "http://127.0.0.1:1/unreachable")
            let token = try await h.client.requestTestNotification(now: Date()).get()
            secrets.append(token)
            h.api.failNext(2, with: .httpStatus(500))
            reported.append("\(await h.client.testNotificationStatus(token: token, now: Date()))")
            reported.append("\(await h.client.testNotificationStatus(token: token + "x", now: Date()))")
            reported.append("\(await validator.validate(receipt: String(receipt.dropLast(40)), now: Date()))")
            var tampered = JWSParts(try #require(try h.api.signedTransaction(purchase.transactionID)))
            tampered.payload[tampered.payload.count / 2] ^= 1
            h.api.replaceSignedTransaction(purchase.transactionID, with: tampered.compact)
            reported.append("\(await validator.validate(receipt: receipt, now: Date()))")
            h.api.revokeKey(h.api.key.keyID)
            reported.append("\(await validator.validate(receipt: receipt, now: Date()))")
            await h.api.waitForDeliveries()

            reported += h.outcomes.list
            #expect(reported.count > 15)
            for line in reported {
                for secret in secrets where secret.count >= 16 {
                    #expect(!line.contains(secret.prefix(24)) && !line.contains(secret.suffix(24)), "\(line)")
                }
                #expect(!line.contains("eyJ"), "a JWT or JWS in: \(line)")
            }
        }
    }
}
