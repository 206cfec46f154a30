import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
import Synchronization
import Testing

/// Every test with several `depot serve` processes (and nginx), one at a time: each starts three servers and
/// PostgreSQL work, and the failover test measures under load; side by side they would starve each other
/// and the rest of the suite on a small machine.
@Suite(.serialized) enum ScaleOutTests {}

extension ScaleOutTests {
    /// scale-out §1, §2 and §4 with real parts: three `depot serve` processes on one PostgreSQL database and one
    /// catalog/content tree agree on revocations, restores, bindings, notifications, tokens and publishes.
    @Suite(.serialized) struct ScaleOutAgreementTests {
        static let file = WirePath.packFile(pack: "level2", version: 1, path: "stages.bin")

        /// Polls `file` with `token` on every port from its own thread until the answer's error code is `code` (nil:
        /// a 200), and returns each port's delay in seconds from the call (nil: not within `limit`).
        static func delays(until code: String?, ports: [Int], token: String, limit: Double = 10) async throws -> [Double?] {
            let file = self.file
            return try await withThrowingTaskGroup(of: (Int, Double?).self) { group in
                for (index, port) in ports.enumerated() {
                    group.addTask {
                        try await OffPool.run {
                            let start = ContinuousClock.now
                            var connection = try RawHTTPConnection(port: port)
                            while ContinuousClock.now - start < .milliseconds(Int(limit * 1000)) {
                                let sent = connection.send("GET \(file) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
                                guard sent, let response = try? connection.readResponse(timeout: 5) else {
                                    connection = try RawHTTPConnection(port: port)
                                    continue
                                }
                                let matches = code == nil ? response.status == 200 : response.errorCode == code
                                if matches { return (index, Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000) }
                                if response.header("Connection") == "close" { connection = try RawHTTPConnection(port: port) }
                            }
                            return (index, nil)
                        }
                    }
                }
                var delays = [Double?](repeating: nil, count: ports.count)
                for try await (index, delay) in group { delays[index] = delay }
                return delays
            }
        }

        /// A purchase through A, a REFUND posted to B: every instance refuses the old token (`403 revoked`) within
        /// 1 s of B's acknowledgement; REFUND_REVERSED posted to C restores it everywhere within 1 s. The token A
        /// issued opens the pack on B and C: the instances share the database's token key.
        @Test func aRefundThroughOneInstanceIsEnforcedByEveryInstance() async throws {
            try await ScaleOutCluster.run { cluster in
                let ports = cluster.instances.map(\.port)
                let transaction = cluster.transaction()
                let bought = try await cluster.purchase(transaction, account: "player-1", through: ports[0])
                let token = try #require(bought.token, "\(bought.summary)")
                for port in ports {
                    let served = try await ScaleOutCluster.fileStatus(port, token: token)
                    #expect(served.status == 200, "instance on \(port): \(served.summary)")
                }

                let refund = try await ScaleOutCluster.post(ports[1], WirePath.notifications.pattern,
                                                            json: try cluster.notification(.refund, about: transaction))
                #expect(refund.status == 200, "\(refund.summary)")
                let revoked = try await Self.delays(until: "revoked", ports: ports, token: token)
                for (port, delay) in zip(ports, revoked) {
                    let seconds = try #require(delay, "instance on \(port) still serves a refunded purchase")
                    #expect(seconds <= 1.0, "instance on \(port) refused after \(seconds) s")
                }
                let refused = try await ScaleOutCluster.fileStatus(ports[2], token: token)
                #expect(refused.status == 403 && refused.errorCode == "revoked")

                let reversal = try await ScaleOutCluster.post(ports[2], WirePath.notifications.pattern,
                                                              json: try cluster.notification(.refundReversed, about: transaction))
                #expect(reversal.status == 200, "\(reversal.summary)")
                let restored = try await Self.delays(until: nil, ports: ports, token: token)
                for (port, delay) in zip(ports, restored) {
                    let seconds = try #require(delay, "instance on \(port) still refuses a restored purchase")
                    #expect(seconds <= 1.0, "instance on \(port) restored after \(seconds) s")
                }
            }
        }

        /// `--account-policy first`: two accounts bind the same purchase through two instances at the same moment,
        /// 50 times; each time exactly one gets it, and the third instance agrees with the winner.
        @Test func firstBindingWinsOnceAcrossInstances() async throws {
            try await ScaleOutCluster.run(extraArguments: ["--account-policy", "first"]) { cluster in
                let ports = cluster.instances.map(\.port)
                for round in 0..<50 {
                    let transaction = cluster.transaction()
                    async let alice = cluster.purchase(transaction, account: "alice-\(round)", through: ports[0])
                    async let bob = cluster.purchase(transaction, account: "bob-\(round)", through: ports[1])
                    let answers = try await [alice, bob]
                    let winners = answers.filter { $0.token != nil }
                    let losers = answers.filter { $0.rejections.map(\.reason) == ["bound_to_other_account"] }
                    #expect(winners.count == 1 && losers.count == 1,
                            "round \(round): \(answers.map(\.summary))")
                    if round % 10 == 0, winners.count == 1 {
                        let winner = answers[0].token != nil ? "alice-\(round)" : "bob-\(round)"
                        let loser = winner.hasPrefix("alice") ? "bob-\(round)" : "alice-\(round)"
                        let again = try await cluster.purchase(transaction, account: winner, through: ports[2])
                        #expect(again.token != nil, "\(again.summary)")
                        let refused = try await cluster.purchase(transaction, account: loser, through: ports[2])
                        #expect(refused.rejections.map(\.reason) == ["bound_to_other_account"], "\(refused.summary)")
                    }
                }
            }
        }

        /// The same V2 notification posted to all three instances at once (Apple retrying): every instance
        /// acknowledges it, and it is applied once (one instance records the revocation, the others find the
        /// notification already processed).
        @Test func theSameNotificationToEveryInstanceIsAppliedOnce() async throws {
            try await ScaleOutCluster.run { cluster in
                let ports = cluster.instances.map(\.port)
                let transaction = cluster.transaction()
                let bought = try await cluster.purchase(transaction, through: ports[0])
                let token = try #require(bought.token, "\(bought.summary)")
                let uuid = UUID().uuidString.lowercased()
                let refund = PurchaseFixture.jsonBytes(try cluster.notification(.refund, about: transaction, uuid: uuid))
                let answers = try await withThrowingTaskGroup(of: RawResponse.self) { group in
                    for port in ports {
                        group.addTask {
                            try await ScaleOutCluster.request(port, "POST", WirePath.notifications.pattern,
                                                              headers: ["Content-Type": "application/json"], body: refund)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.map(\.status) == [200, 200, 200], "\(answers.map(\.summary))")
                // The instances write their log lines on their own; a saturated machine may hold one back a moment.
                let logged = { cluster.instances.filter { $0.log.contains("notification REFUND: revoked 1") } }
                _ = try await eventually(within: 30) { !logged().isEmpty }
                let applied = logged()
                #expect(applied.count == 1, "applied by \(applied.map(\.name))")
                let rows = try await cluster.postgres.sql("SELECT count(*) FROM processed_notifications WHERE id = 'v2:\(uuid)'",
                                                          database: cluster.database)
                #expect(rows == "1")
                let revocations = try await cluster.postgres.sql(
                    "SELECT count(*) FROM revocations WHERE transaction_id = '\(transaction.transactionId)'", database: cluster.database)
                #expect(revocations == "1")
                for port in ports {
                    #expect(try await ScaleOutCluster.fileStatus(port, token: token).errorCode == "revoked")
                }
            }
        }

        /// A publish through A's admin API is served by B and C within 2 s (one catalog/content tree, each
        /// instance's watcher), and their product lists agree byte for byte.
        @Test func aPublishThroughOneInstanceIsServedByTheOthers() async throws {
            try await ScaleOutCluster.run { cluster in
                let ports = cluster.instances.map(\.port)
                let admin = ["Authorization": "Bearer \(ScaleOutCluster.adminToken)"]
                let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                let upload = try await ScaleOutCluster.request(ports[0], "PUT", WirePath.adminPackFile(pack: "level7", version: 1, path: "map.bin"),
                                                               headers: admin, body: bytes)
                #expect(upload.status == 201 || upload.status == 200, "\(upload.summary)")
                let product = "{\"id\": \"com.example.depot.level7\", \"type\": \"non-consumable\", \"title\": \"Level 7\"}"
                let published = try await ScaleOutCluster.request(ports[0], "POST", WirePath.adminPublish(pack: "level7", version: 1),
                                                                  headers: admin.merging(["Content-Type": "application/json"]) { $1 },
                                                                  body: Array(product.utf8))
                #expect(published.status == 201, "\(published.summary)")
                let acknowledged = ContinuousClock.now
                for port in ports.dropFirst() {
                    let seen = try await eventually(within: 2) {
                        try await ScaleOutCluster.get(port, WirePath.productsV1.pattern).text.contains("com.example.depot.level7")
                    }
                    #expect(seen, "instance on \(port) did not list the new product within 2 s")
                }
                #expect(ContinuousClock.now - acknowledged < .seconds(2))
                let lists = try await withThrowingTaskGroup(of: RawResponse.self) { group in
                    for port in ports { group.addTask { try await ScaleOutCluster.get(port, WirePath.productsV2.pattern) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(lists.map(\.text)).count == 1)
                #expect(Set(lists.compactMap { $0.header("ETag") }).count == 1)
                // The others serve the new pack's bytes too, with a token any instance issued.
                let token = try await Self.operatorToken(cluster, pack: "level7")
                for port in ports {
                    let file = try await ScaleOutCluster.get(port, WirePath.packFile(pack: "level7", version: 1, path: "map.bin"), token: token)
                    #expect(file.status == 200 && file.body == bytes, "instance on \(port): \(file.status)")
                }
            }
        }

        /// `depot token --ledger postgres://…` signs with the key the instances read from the database.
        static func operatorToken(_ cluster: ScaleOutCluster, pack: String) async throws -> String {
            let (uri, content) = (cluster.ledgerURI, cluster.tree.path + "/content")
            let result = try await OffPool.run {
                try SpawnedProcess.run(ProcessRunner.depotExecutable, ["token", "--pack", pack, "--ledger", uri, "--content", content])
            }
            let token = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(result.status == 0 && !token.contains("\n"), "\(result.output)")
            return token
        }
    }
}
