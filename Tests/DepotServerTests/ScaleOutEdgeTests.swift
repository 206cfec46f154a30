import AppStoreSimulator
import DepotCrypto
import DepotTestSupport
import DepotWire
import Foundation
import Testing

extension ScaleOutTests {
    /// scale-out §6 with real parts: three `depot serve` processes on one PostgreSQL database behind the nginx that
    /// `depot edge-config nginx` prints. Pack bytes come from nginx's cache with Depot's semantics; every request
    /// still asks Depot whether the token may open the file.
    @Suite(.serialized) struct ScaleOutEdgeTests {
        static let stages = WirePath.packFile(pack: "level2", version: 1, path: "stages.bin")
        static let bytesSeries = "depot_http_response_bytes_total{route=\"pack_file\"}"

        /// The pack file bytes every instance's file routes (the file URL and the origin route) sent so far.
        static func packBytesSent(_ cluster: ScaleOutCluster) async throws -> Double {
            var total = 0.0
            for instance in cluster.instances { total += try await ScaleOutCluster.metrics(instance.port)[bytesSeries] ?? 0 }
            return total
        }

        static func sha256(_ bytes: some Collection<UInt8>) -> String { Hex.encode(SHA256.hash(Array(bytes))) }

        /// A pack downloaded twice through the edge: the same bytes and validators as Depot's own answer both times,
        /// the second time from nginx's cache (Depot's file routes send nothing more); every chunk by range with its
        /// SHA-256; `304`, `416`, `If-Range` and a missing token answered as Depot does.
        @Test func packBytesComeFromTheEdgeCacheWithDepotsSemantics() async throws {
            try await ScaleOutCluster.run(edge: true) { cluster in
                let edge = cluster.edgePort
                let direct = cluster.instances[1].port
                let bought = try await cluster.purchase(cluster.transaction(), through: edge)
                let token = try #require(bought.token, "\(bought.summary)")
                let manifestAnswer = try await ScaleOutCluster.get(edge, WirePath.versionManifest(pack: "level2", version: 1), token: token)
                #expect(manifestAnswer.status == 200, "\(manifestAnswer.summary)")
                let manifest = try JSONDecoder().decode(PackManifest.self, from: Data(manifestAnswer.body))
                #expect(manifest.files.count == 3)

                let before = try await Self.packBytesSent(cluster)
                for round in 1...2 {
                    for file in manifest.files {
                        let viaEdge = try await ScaleOutCluster.get(edge, file.url, token: token)
                        #expect(viaEdge.status == 200, "round \(round) \(file.path): \(viaEdge.summary)")
                        #expect(Self.sha256(viaEdge.body) == file.sha256, "round \(round) \(file.path)")
                        if round == 2 { #expect(viaEdge.header("X-Depot-Edge-Cache") == "HIT", "\(file.path)") }
                        let own = try await ScaleOutCluster.get(direct, file.url, token: token)
                        for field in ["ETag", "Last-Modified", "Cache-Control", "Accept-Ranges", "Content-Length"] {
                            #expect(viaEdge.header(field) == own.header(field), "\(file.path) \(field)")
                        }
                    }
                }
                // The direct requests sent the pack twice; the edge's fills once: the second download came from its cache.
                let packBytes = Double(manifest.files.reduce(0) { $0 + $1.size })
                let counted = try await eventually(within: 2) { try await Self.packBytesSent(cluster) - before == 3 * packBytes }
                let filled = try await Self.packBytesSent(cluster) - before - 2 * packBytes
                #expect(counted, "the edge fetched \(filled) bytes from the instances for two downloads of \(packBytes)")

                // Every chunk by range, through the (now warm) cache: Depot's 206 with Accept-Ranges.
                let afterDownloads = try await Self.packBytesSent(cluster)
                for file in manifest.files {
                    for chunk in file.chunks {
                        let range = "bytes=\(chunk.offset)-\(chunk.offset + chunk.length - 1)"
                        let part = try await ScaleOutCluster.get(edge, file.url, token: token, headers: ["Range": range])
                        #expect(part.status == 206, "\(file.path) \(range): \(part.summary)")
                        #expect(part.header("Content-Range") == "bytes \(chunk.offset)-\(chunk.offset + chunk.length - 1)/\(file.size)")
                        #expect(part.header("Accept-Ranges") == "bytes")
                        #expect(part.header("ETag") == file.etag)
                        #expect(Self.sha256(part.body) == chunk.sha256, "\(file.path) chunk at \(chunk.offset)")
                    }
                }
                #expect(try await Self.packBytesSent(cluster) == afterDownloads, "ranges of cached files were served by the edge")

                // Conditions and refusals: the edge answers exactly as Depot does.
                let stages = try #require(manifest.files.first { $0.path == "stages.bin" })
                let cases: [(String, [String: String], String?)] = [
                    ("not modified", ["If-None-Match": stages.etag], token),
                    ("unsatisfiable", ["Range": "bytes=\(stages.size + 10)-"], token),
                    ("If-Range mismatch", ["Range": "bytes=0-99", "If-Range": "\"other\""], token),
                    ("If-Range match", ["Range": "bytes=100-199", "If-Range": stages.etag], token),
                    ("no token", [:], nil),
                    ("bad token", [:], "not-a-token"),
                    ("precondition", ["If-Match": "\"other\""], token),
                ]
                for (name, headers, presented) in cases {
                    let viaEdge = try await ScaleOutCluster.get(edge, stages.url, token: presented, headers: headers)
                    let own = try await ScaleOutCluster.get(direct, stages.url, token: presented, headers: headers)
                    #expect(viaEdge.status == own.status, "\(name): edge \(viaEdge.summary), Depot \(own.summary)")
                    if viaEdge.status >= 400 {
                        #expect(viaEdge.body == own.body, "\(name): edge \(viaEdge.text), Depot \(own.text)")
                        #expect(viaEdge.header("Content-Type") == own.header("Content-Type"), "\(name)")
                    } else {
                        #expect(Self.sha256(viaEdge.body) == Self.sha256(own.body), "\(name)")
                        #expect(viaEdge.header("Content-Range") == own.header("Content-Range"), "\(name)")
                    }
                    #expect(viaEdge.header("WWW-Authenticate") == own.header("WWW-Authenticate"), "\(name)")
                }
            }
        }

        /// `curl -C -` resumes a partial file through the edge; a REFUND makes the edge refuse the token within 1 s
        /// although the bytes are cached; the origin route refuses a request without the edge secret, directly
        /// and through the edge.
        @Test func resumesRevocationsAndTheOriginRoute() async throws {
            try await ScaleOutCluster.run(edge: true) { cluster in
                let edge = cluster.edgePort
                let transaction = cluster.transaction()
                let bought = try await cluster.purchase(transaction, through: cluster.instances[0].port)
                let token = try #require(bought.token, "\(bought.summary)")
                let whole = try await ScaleOutCluster.get(edge, Self.stages, token: token)
                #expect(whole.status == 200)

                let target = cluster.tree.path + "/stages.bin"
                try Data(whole.body.prefix(700_001)).write(to: URL(fileURLWithPath: target))
                let url = "http://127.0.0.1:\(edge)\(Self.stages)"
                let curl = try await DebianPackage.tool("curl", package: "curl")
                let resumed = try await OffPool.run {
                    try SpawnedProcess.run(curl, ["-sS", "-C", "-", "-o", target, "-w", "%{http_code}",
                                                             "-H", "Authorization: Bearer \(token)", url])
                }
                #expect(resumed.status == 0 && resumed.output == "206", "\(resumed.output)")
                let file = try Data(contentsOf: URL(fileURLWithPath: target))
                #expect(Self.sha256(file) == Self.sha256(whole.body))

                // The origin route: without the secret, or with another, refused; only nginx's own requests carry it.
                let origin = WirePath.edgeOriginPrefix + "level2/1/files/stages.bin"
                for port in [cluster.instances[2].port, edge] {
                    for headers in [[:], ["X-Depot-Edge-Secret": "wrong-secret-wrong-secret-wrong-secret"]] {
                        let refused = try await ScaleOutCluster.get(port, origin, headers: headers)
                        #expect(refused.status == 403 && !refused.body.contains(0x00) && refused.body.count < 1_000,
                                "\(port) \(headers): \(refused.summary)")
                    }
                }
                let allowed = try await ScaleOutCluster.get(cluster.instances[2].port, origin,
                                                            headers: ["X-Depot-Edge-Secret": ScaleOutCluster.edgeSecret])
                #expect(allowed.status == 200 && allowed.body == whole.body)

                // A refund through one instance: the edge refuses the cached file within 1 s of the acknowledgement,
                // with Depot's own 403 body.
                let refund = try await ScaleOutCluster.post(cluster.instances[1].port, WirePath.notifications.pattern,
                                                            json: try cluster.notification(.refund, about: transaction))
                #expect(refund.status == 200, "\(refund.summary)")
                // Every instance behind the edge learns it within 1 s (each on its own schedule), and so the edge,
                // whichever instance it asks.
                let ports = cluster.instances.map(\.port) + [edge]
                let delays = try await ScaleOutAgreementTests.delays(until: "revoked", ports: ports, token: token)
                for (port, delay) in zip(ports, delays) {
                    let delay = try #require(delay, "\(port) still serves a refunded purchase")
                    #expect(delay <= 1.0, "\(port) refused after \(delay) s")
                }
                let refused = try await ScaleOutCluster.get(edge, Self.stages, token: token)
                let own = try await ScaleOutCluster.get(cluster.instances[0].port, Self.stages, token: token)
                #expect(refused.status == 403 && refused.errorCode == "revoked")
                #expect(refused.body == own.body)
            }
        }
    }
}
