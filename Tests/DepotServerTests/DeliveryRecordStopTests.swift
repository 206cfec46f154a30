import DepotCore
import DepotTestSupport
import Foundation
import Ledger
import Testing
import DepotServer

/// `SIGTERM` writes the delivery record of what was sent since the last periodic write (spec app-store-server-api
/// §7): a real `depot serve` with writes an hour apart (`--delivery-record-interval 3600`), a download, `SIGTERM`
/// well within the hour, and the record is in the ledger once the process has exited.
@Suite struct DeliveryRecordStopTests {
    @Test func sigtermWithinTheIntervalWritesWhatWasSent() async throws {
        let tree = TemporaryDirectory("depot-sigterm-record")
        let treePath = tree.path
        try await OffPool.run { try TestDepot.copySample(into: treePath) }
        let secret = "sigterm-record-secret-0123456789-abcdef"
        let instance = try await DepotInstance.start("sigterm", arguments: [
            "--loops", "1", "--access-log", "off", "--catalog", tree.path + "/catalog", "--content", tree.path + "/content",
            "--data", tree.path + "/var", "--token-secret", secret, "--delivery-record-interval", "3600",
        ], directory: tree.path)
        let purchase = "7400000000000001"
        let token = DownloadTokenAuthority(key: Array(secret.utf8)).issue(DownloadTokenClaims(
            pack: "level2", originalTransactionID: purchase, account: nil, expires: Int64(Date().timeIntervalSince1970) + 3600))
        let answer = try await ScaleOutCluster.get(instance.port, "/v1/packs/level2/1/files/README.txt", token: token)
        #expect(answer.status == 200, "\(answer.summary)")
        let status = await instance.stop()
        #expect(status == 0, "\(instance.log)")
        let ledger = try await Ledger.open(at: tree.path + "/var/ledger.sqlite")
        let records = try await ledger.deliveries(originalTransactionID: purchase)
        #expect(records.map(\.path) == ["README.txt"], "\(instance.log)")
        #expect(records.first?.deliveredBytes == Int64(answer.body.count))
        await ledger.close()
    }
}
