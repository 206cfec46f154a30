import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
import Ledger
import Testing

extension ScaleOutTests {
    /// The delivery record (spec app-store-server-api §7) of downloads through the nginx edge: the bytes leave from
    /// nginx's cache, so Depot records what `/v1/edge/authorize` allowed for the token's purchase — the whole file,
    /// or the requested range — and nothing for a `HEAD` or a `304`.
    @Suite(.serialized) struct ScaleOutEdgeDeliveryTests {
        @Test func downloadsThroughTheEdgeAreRecordedForThePurchase() async throws {
            try await ScaleOutCluster.run(instances: 1, edge: true) { cluster in
                let edge = cluster.edgePort
                let transaction = cluster.transaction()
                let bought = try await cluster.purchase(transaction, through: edge)
                let token = try #require(bought.token, "\(bought.summary)")
                let manifestAnswer = try await ScaleOutCluster.get(edge, WirePath.versionManifest(pack: "level2", version: 1), token: token)
                let manifest = try JSONDecoder().decode(PackManifest.self, from: Data(manifestAnswer.body))
                let readme = try #require(manifest.files.first { $0.path == "README.txt" })
                let stages = try #require(manifest.files.first { $0.path == "stages.bin" })
                let index = try #require(manifest.files.first { $0.path == "stages/index.json" })
                #expect(stages.chunks.count >= 2)

                // README.txt whole (twice: the second from the cache, and a 304), stages.bin's first chunk by range,
                // the index by HEAD only.
                for _ in 0..<2 { #expect(try await ScaleOutCluster.get(edge, readme.url, token: token).status == 200) }
                let unchanged = try await ScaleOutCluster.get(edge, readme.url, token: token, headers: ["If-None-Match": readme.etag])
                #expect(unchanged.status == 304, "\(unchanged.summary)")
                let first = stages.chunks[0]
                let part = try await ScaleOutCluster.get(edge, stages.url, token: token,
                                                         headers: ["Range": "bytes=\(first.offset)-\(first.offset + first.length - 1)"])
                #expect(part.status == 206, "\(part.summary)")
                let head = try await ScaleOutCluster.request(edge, "HEAD", index.url, headers: ["Authorization": "Bearer \(token)"])
                #expect(head.status == 200, "\(head.summary)")

                let location = try LedgerLocation(parsing: cluster.ledgerURI)
                let ledger = try await Ledger.open(location, dataDirectory: cluster.tree.path + "/reader", poolSize: 1)
                let original = transaction.originalTransactionId
                var files: [String: [Int64]] = [:]
                let recorded = try await eventually(within: 30) {
                    let deliveries = try await ledger.deliveries(originalTransactionID: original)
                    files = Dictionary(deliveries.map { ($0.path, $0.chunks.map(\.offset)) }, uniquingKeysWith: +)
                    return files["README.txt"] != nil && files["stages.bin"] != nil
                }
                #expect(recorded, "\(files)")
                #expect(files["README.txt"] == [0])
                #expect(files["stages.bin"] == [first.offset], "only the chunk asked for")
                #expect(files["stages/index.json"] == nil, "a HEAD sends no bytes")
                let sent = try await ledger.deliveries(originalTransactionID: original)
                #expect(sent.first { $0.path == "README.txt" }?.deliveredBytes == readme.size)
                #expect(sent.first { $0.path == "stages.bin" }?.deliveredBytes == first.length)
                await ledger.close()
            }
        }
    }
}
