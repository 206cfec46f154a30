import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
import Testing

/// The consumption queue is durable (spec app-store-server-api §7): a real `depot serve` killed with SIGKILL
/// right after acknowledging a `CONSUMPTION_REQUEST` sends the answer once it runs again.
@Suite struct ConsumptionAnswerRestartTests {
    /// POSTs `body` to the instance's `path`.
    static func post(_ instance: DepotInstance, _ path: String, _ body: String) async throws -> RawResponse {
        let port = instance.port
        let request = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(request)
            return try connection.readResponse(timeout: 30)
        }
    }

    @Test func anAnswerAcknowledgedBeforeASIGKILLIsSentAfterTheRestart() async throws {
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-365 * 86_400), validUntil: now.addingTimeInterval(365 * 86_400))
        let apple = try SimulatedAppStore(bundleID: PurchaseFixture.bundleID, sharedSecret: nil, pki: pki)
        let tree = TemporaryDirectory("depot-consumption-kill")
        let treePath = tree.path
        try await OffPool.run { try TestDepot.copySample(into: treePath) }
        tree.write("root.pem", pki.rootPEM)
        let key = apple.serverAPI.key
        let keyFile = try key.writeKeyFile(into: treePath)
        let instance = try await DepotInstance.start("depot", arguments: [
            "--host", "127.0.0.1", "--loops", "1", "--catalog", treePath + "/catalog", "--content", treePath + "/content",
            "--data", treePath + "/var", "--token-secret", "test-secret-test-secret-test-secret-0123",
            "--apple-root-certs", treePath + "/root.pem", "--access-log", "off",
            "--apple-api-key", keyFile, "--apple-api-key-id", key.keyID, "--apple-api-issuer", key.issuerID,
            "--apple-api-url", apple.apiURL.absoluteString, "--apple-api-sandbox-url", apple.apiSandboxURL.absoluteString,
            "--notification-sync", "0", "--apple-timeout", "60", "--consumption-info", "on",
        ], directory: treePath)

        let transaction = apple.serverAPI.purchase(PurchaseFixture.level2, customer: "killed")
        let jws = try #require(try apple.serverAPI.signedTransaction(transaction.transactionID))
        let bought = try await Self.post(instance, WirePath.receipts.pattern, "{\"transactions\": [\"\(jws)\"]}")
        #expect(bought.status == 200, "\(bought.summary)")

        // Apple is down: nothing can be answered before the kill.
        apple.serverAPI.failNext(10_000, with: .httpStatus(503), endpoint: .consumption)
        let uuid = try #require(apple.serverAPI.requestRefund(transaction.transactionID))
        let payload = try #require(apple.serverAPI.signedPayload(ofNotification: uuid))
        let acknowledged = try await Self.post(instance, WirePath.notifications.pattern, "{\"signedPayload\": \"\(payload)\"}")
        #expect(acknowledged.status == 200, "\(acknowledged.summary)")
        await instance.kill()

        apple.serverAPI.clearFailures()
        try await instance.restart()
        let answers = await ConsumptionAnswerTests.answers(apple.serverAPI, count: 1)
        #expect(answers.count == 1, "no answer after the restart; log:\n\(instance.log.suffix(2000))")
        #expect(answers.first?.transactionID == transaction.transactionID)
        #expect(ConsumptionAnswerTests.fields(answers.first)["refundPreference"] == "GRANT_FULL")
        await instance.stop()
        await apple.stop()
    }
}
