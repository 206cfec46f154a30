import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Ledger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A purchase or notification is acknowledged only once the ledger holds it (spec §2.3, §4.5, §7): a failed
/// write is a `503` that loses nothing, and a `200` survives the process being killed right after it.
@Suite struct LedgerDurabilityPurchaseTests {
    @Test func failingLedgerWriteIsUnavailableAndLosesNothing() async throws {
        try await PurchaseFixture.run { fixture in
            let ledger = try #require(fixture.depot.app.ledger)
            let kept = PurchaseFixture.transaction()
            let keptResponse = try await fixture.postTransactions([try fixture.signer.signedTransaction(kept)])
            #expect(keptResponse.status == 200)
            let keptToken = try #require(keptResponse.token)

            // The file stops accepting writes.
            try await ledger.setQueryOnly(true)
            let pending = PurchaseFixture.purchase()
            let receipt = fixture.apple.issueReceipt([pending])
            let refused = try await fixture.postReceipt(receipt, account: "account-a")
            #expect(refused.status == 503, "\(refused.summary)")
            #expect(refused.errorCode == "ledger_unavailable")
            #expect(refused.header("Retry-After") != nil)
            #expect(refused.token == nil)

            let refund = try fixture.signer.signedNotification(
                .refund, transaction: NotificationAppStoreTests.revoked(kept), signedDate: Date())
            let refundRefused = try await fixture.notify(signedPayload: refund)
            #expect(refundRefused.status == 503, "\(refundRefused.summary)")
            #expect(refundRefused.errorCode == "ledger_unavailable")
            // Not committed, so not applied in memory either.
            #expect(try await fixture.packStatus("level2", token: keptToken).status == 307)
            #expect(try await ledger.purchases(originalTransactionID: pending.transactionID).isEmpty)

            // Writable again: the client's retry and Apple's redelivery go through.
            try await ledger.setQueryOnly(false)
            let retried = try await fixture.postReceipt(receipt, account: "account-a")
            #expect(retried.status == 200, "\(retried.summary)")
            #expect(retried.entitlements.count == 1)
            #expect(try await fixture.notify(signedPayload: refund).status == 200)
            #expect(try await fixture.packStatus("level2", token: keptToken).status == 403)

            let keptRows = try await ledger.purchases(originalTransactionID: kept.transactionId)
            #expect(keptRows.map(\.transactionID) == [kept.transactionId])
            #expect(keptRows.first?.source == .jws)
            #expect(keptRows.first?.revocationDate != nil)
            let pendingRows = try await ledger.purchases(originalTransactionID: pending.transactionID)
            #expect(pendingRows.map(\.transactionID) == [pending.transactionID])
            #expect(pendingRows.first?.source == .receipt)
            #expect(pendingRows.first?.productID == PurchaseFixture.level2)
        }
    }

    /// `depot serve` killed with SIGKILL right after answering: the purchase and the refund it acknowledged
    /// are in the ledger when it is opened again.
    @Test func acknowledgedWritesSurviveSIGKILL() async throws {
        let apple = try SimulatedAppStore(bundleID: PurchaseFixture.bundleID)
        let tree = TemporaryDirectory("depot-crash")
        let treePath = tree.path
        try await OffPool.run { try TestDepot.copySample(into: treePath) }
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400))
        tree.write("root.pem", pki.rootPEM)
        let signer = TransactionSigner(pki: pki)

        let arguments = [
            "serve", "--port", "0", "--loops", "1", "--access-log", "off",
            "--catalog", tree.path + "/catalog", "--content", tree.path + "/content", "--data", tree.path + "/var",
            "--apple-verify-url", apple.productionURL.absoluteString,
            "--apple-sandbox-verify-url", apple.sandboxURL.absoluteString,
            "--apple-root-certs", tree.path + "/root.pem",
            "--token-secret", "crash-test-secret-crash-test-secret-0123",
        ]
        let server = try await OffPool.run { try DepotProcess.start(arguments) }
        let purchase = PurchaseFixture.purchase()
        let refunded = PurchaseFixture.transaction()
        do {
            let port = server.port
            let receipt = Array("{\"receipt\": \"\(apple.issueReceipt([purchase]))\", \"account\": \"account-a\"}".utf8)
            let transactions = PurchaseFixture.jsonBytes(["transactions": [try signer.signedTransaction(refunded)]])
            let refund = PurchaseFixture.jsonBytes(["signedPayload": try signer.signedNotification(
                .refund, transaction: NotificationAppStoreTests.revoked(refunded), signedDate: Date())])
            let statuses = try await OffPool.run {
                var statuses: [Int] = []
                for (path, body) in [("/v1/receipts", receipt), ("/v1/receipts", transactions),
                                     ("/v1/notifications/appstore", refund)] {
                    let connection = try RawHTTPConnection(port: port)
                    connection.send(Array("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
                    statuses.append(try connection.readResponse(timeout: 20).status)
                }
                // No grace: the process dies the moment the last 200 is read.
                server.kill()
                return statuses
            }
            #expect(statuses == [200, 200, 200])
        } catch {
            server.kill()
            await apple.stop()
            throw error
        }
        await apple.stop()

        let ledger = try await Ledger.open(at: tree.path + "/var/ledger.sqlite")
        let rows = try await ledger.purchases(originalTransactionID: purchase.transactionID)
        #expect(rows.map(\.transactionID) == [purchase.transactionID])
        #expect(rows.first?.productID == PurchaseFixture.level2)
        #expect(ledger.access(originalTransactionID: purchase.transactionID, account: "account-a") == .allowed)
        #expect(ledger.access(originalTransactionID: purchase.transactionID, account: "account-b") == .transferred)
        #expect(try await ledger.purchases(originalTransactionID: refunded.transactionId).count == 1)
        #expect(ledger.access(originalTransactionID: refunded.transactionId, account: nil) == .revoked)
        await ledger.close()
    }
}

/// `depot` run as a child process: started, its port read from "listening on" on stdout, killed.
private final class DepotProcess: @unchecked Sendable {
    let child: SpawnedChild
    let port: Int

    private init(child: SpawnedChild, port: Int) {
        self.child = child
        self.port = port
    }

    static func start(_ arguments: [String]) throws -> DepotProcess {
        let child = try SpawnedChild.start(ProcessRunner.depotExecutable, arguments)
        // Read stdout until the line that says where it listens (bounded by EOF: a failed start closes it).
        var text = ""
        while !text.contains("\n") {
            let piece = child.output.availableData
            if piece.isEmpty { break }
            text += String(decoding: piece, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }),
              let portText = line.split(separator: ":").last, let port = Int(portText) else {
            child.send(SIGTERM)
            child.waitForExit()
            throw RawHTTPConnection.Failure(description: "depot serve did not start: \(text)")
        }
        return DepotProcess(child: child, port: port)
    }

    /// SIGKILL, then reap.
    func kill() {
        child.send(SIGKILL)
        child.waitForExit()
    }
}
