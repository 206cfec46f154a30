import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
import Testing

extension ScaleOutTests {
    /// Support decisions on a PostgreSQL ledger shared by two instances (spec app-store-server-api §8): a
    /// revoke through one instance's admin API is in force on the other within the propagation bound, exactly
    /// like a refund, and a restore through the other gives access back on both.
    @Suite(.serialized) struct ScaleOutSupportTests {
        static let admin = ["Authorization": "Bearer \(ScaleOutCluster.adminToken)"]

        @Test func aSupportRevokeThroughOneInstanceRefusesTheTokenOnTheOtherAndARestoreGivesItBack() async throws {
            try await ScaleOutCluster.run(instances: 2) { cluster in
                let ports = cluster.instances.map(\.port)
                let transaction = cluster.transaction()
                let bought = try await cluster.purchase(transaction, account: "alice", through: ports[0])
                let token = try #require(bought.token, "\(bought.summary)")
                for port in ports { #expect(try await ScaleOutCluster.fileStatus(port, token: token).status == 200) }

                let revoked = try await ScaleOutCluster.request(ports[0], "POST", WirePath.adminPurchaseRevoke(original: transaction.transactionId),
                                                                headers: Self.admin)
                #expect(revoked.status == 200, "\(revoked.summary)")
                #expect(revoked.object["state"] as? String == "revoked")
                let decided = ContinuousClock.now
                #expect(try await ScaleOutCluster.fileStatus(ports[0], token: token).errorCode == "revoked")
                let seen = try await eventually(within: 5) {
                    try await ScaleOutCluster.fileStatus(ports[1], token: token).errorCode == "revoked"
                }
                #expect(seen, "the other instance still honours the token")
                print("support revoke seen on the second instance after \(ContinuousClock.now - decided)")
                let refused = try await ScaleOutCluster.fileStatus(ports[1], token: token)
                #expect(refused.status == 403, "\(refused.summary)")

                // Asked again on the other instance: the same state, nothing more recorded.
                let again = try await ScaleOutCluster.request(ports[1], "POST", WirePath.adminPurchaseRevoke(original: transaction.transactionId),
                                                              headers: Self.admin)
                #expect(again.status == 200, "\(again.summary)")
                #expect(again.text == revoked.text)
                let rows = try await cluster.postgres.sql(
                    "SELECT count(*) FROM revocations WHERE original_transaction_id = '\(transaction.transactionId)'", database: cluster.database)
                #expect(rows == "1")
                let looked = try await ScaleOutCluster.get(ports[1], "/admin/v1/purchases?account=alice", headers: Self.admin)
                #expect((looked.object["purchases"] as? [[String: Any]])?.first?["state"] as? String == "revoked", "\(looked.summary)")

                let restored = try await ScaleOutCluster.request(ports[1], "POST", WirePath.adminPurchaseRestore(original: transaction.transactionId),
                                                                 headers: Self.admin)
                #expect(restored.status == 200, "\(restored.summary)")
                #expect(restored.object["state"] as? String == "granted")
                let back = try await eventually(within: 5) {
                    try await ScaleOutCluster.fileStatus(ports[0], token: token).status == 200
                }
                #expect(back, "the first instance still refuses the token after the restore")
                #expect(try await ScaleOutCluster.fileStatus(ports[1], token: token).status == 200)
            }
        }
    }
}
