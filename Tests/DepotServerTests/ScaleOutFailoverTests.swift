import DepotTestSupport
import DepotWire
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension ScaleOutTests {
    /// scale-out §6 and operations §5 with real parts: an instance killed under load behind the printed nginx costs
    /// no request and rejoins after a restart; the printed TLS configuration serves HTTP/1.1 and HTTP/2.
    @Suite(.serialized) struct ScaleOutFailoverTests {
        /// One request of the load: when it started and ended (seconds from the load's start) and whether it got
        /// the answer it expected.
        struct Outcome: Sendable {
            let started: Double
            let ended: Double
            let succeeded: Bool
            let detail: String
        }

        /// Clients on keep-alive connections to `port` (nginx) asking for the product list and random ranges of a
        /// pack file, for `seconds` after `start`.
        static func load(port: Int, token: String, from start: ContinuousClock.Instant, seconds: Double, clients: Int) async throws -> [Outcome] {
            let file = WirePath.packFile(pack: "level2", version: 1, path: "stages.bin")
            let size = 1_310_720
            @Sendable func now() -> Double { Self.seconds(since: start) }
            return try await withThrowingTaskGroup(of: [Outcome].self) { group in
                for client in 0..<clients {
                    group.addTask {
                        try await OffPool.run {
                            var outcomes: [Outcome] = []
                            var generator = SystemRandomNumberGenerator()
                            var connection: RawHTTPConnection?
                            var index = 0
                            while now() < seconds {
                                index += 1
                                let began = now()
                                let isList = (index + client) % 2 == 0
                                var request = "GET \(isList ? WirePath.productsV2.pattern : file) HTTP/1.1\r\nHost: x\r\n"
                                var expected = 200
                                var length = 0
                                if !isList {
                                    let offset = Int.random(in: 0..<(size - 70_000), using: &generator)
                                    length = Int.random(in: 1...65_536, using: &generator)
                                    request += "Authorization: Bearer \(token)\r\nRange: bytes=\(offset)-\(offset + length - 1)\r\n"
                                    expected = 206
                                }
                                request += "\r\n"
                                var succeeded = false
                                var detail = ""
                                do {
                                    if connection == nil { connection = try RawHTTPConnection(port: port) }
                                    guard connection!.send(request) else { throw RawHTTPConnection.Failure(description: "send failed") }
                                    let response = try connection!.readResponse(timeout: 10)
                                    succeeded = response.status == expected && (isList || response.body.count == length)
                                    detail = response.summary
                                    if response.header("Connection")?.lowercased() == "close" { connection = nil }
                                } catch {
                                    detail = "\(error)"
                                    connection = nil
                                }
                                outcomes.append(Outcome(started: began, ended: now(), succeeded: succeeded, detail: detail))
                            }
                            return outcomes
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }

        static func seconds(since start: ContinuousClock.Instant) -> Double {
            Double((ContinuousClock.now - start) / .microseconds(1)) / 1_000_000
        }

        /// 20 s of product-list and range requests through nginx; at 6 s one instance is SIGKILLed: no request
        /// started after the kill fails, and at most the ones in flight at that moment do (nginx passes idempotent
        /// requests on to the next instance, so normally none). After a restart the instance gets requests again.
        @Test func aKilledInstanceCostsNoRequestAndRejoins() async throws {
            try await ScaleOutCluster.run(edge: true) { cluster in
                let bought = try await cluster.purchase(cluster.transaction(), through: cluster.edgePort)
                let token = try #require(bought.token, "\(bought.summary)")
                let victim = cluster.instances[1]
                let killAt = 6.0
                let start = ContinuousClock.now
                async let outcomes = Self.load(port: cluster.edgePort, token: token, from: start, seconds: 20, clients: 2)
                try await Task.sleep(until: start + .seconds(killAt))
                let killBegan = Self.seconds(since: start)
                await victim.kill()
                let killEnded = Self.seconds(since: start)
                let results = try await outcomes
                // In flight at the kill: started before the process was gone, not answered before the signal.
                let inFlight = results.filter { $0.started <= killEnded && $0.ended >= killBegan }
                let failed = results.filter { !$0.succeeded }
                let failedAfter = failed.filter { $0.started > killEnded }
                let failedBefore = failed.filter { $0.ended < killBegan }
                // Enough requests after the kill to cover nginx trying the dead instance again (fail_timeout 2 s).
                let later = results.filter { $0.started > killEnded + 3 }
                #expect(later.count >= 20, "only \(later.count) requests from 3 s after the kill on (\(results.count) in all)")
                #expect(failedBefore.isEmpty, "before the kill: \(failedBefore.prefix(3).map(\.detail))")
                #expect(failedAfter.isEmpty, "after the kill: \(failedAfter.count) of \(results.count): \(failedAfter.prefix(3).map(\.detail))")
                #expect(failed.count <= inFlight.count, "\(failed.count) failed, \(inFlight.count) in flight at the kill")
                let durations = results.map { $0.ended - $0.started }.sorted()
                print("failover: \(results.count) requests (median \(durations[durations.count / 2]) s, max \(durations.last ?? 0) s),",
                      "\(inFlight.count) in flight at the kill, \(failed.count) failed")

                // Restarted on its port, it serves again, directly and through nginx.
                try await victim.restart()
                let direct = try await ScaleOutCluster.get(victim.port, WirePath.productsV2.pattern)
                #expect(direct.status == 200)
                let rejoined = try await eventually(within: 20) {
                    for _ in 0..<6 { _ = try await ScaleOutCluster.get(cluster.edgePort, WirePath.productsV2.pattern) }
                    let samples = try await ScaleOutCluster.metrics(victim.port)
                    return samples.contains { $0.key.hasPrefix("depot_http_requests_total{route=\"products\"") && $0.value > 1 }
                }
                #expect(rejoined, "nginx sent no product list to the restarted instance")
            }
        }

        /// The printed TLS configuration with a self-signed certificate (openssl): curl, trusting that certificate,
        /// gets the product list over HTTP/2 and HTTP/1.1 and a pack range (`206`, the right bytes).
        @Test func theTLSConfigurationServesHTTP2AndHTTP1() async throws {
            let (openssl, curl) = (try await DebianPackage.tool("openssl", package: "openssl"),
                                   try await DebianPackage.tool("curl", package: "curl"))
            let keys = TemporaryDirectory("depot-edge-tls")
            let (certificate, key) = (keys.path + "/edge.pem", keys.path + "/edge.key")
            let made = try await OffPool.run {
                try SpawnedProcess.run(openssl, [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", key, "-out", certificate,
                ])
            }
            try #require(made.status == 0, "\(made.output)")
            chmod(key, 0o644)
            try await ScaleOutCluster.run(instances: 2, edge: true, edgeArguments: ["--tls-cert", certificate, "--tls-key", key]) { cluster in
                let bought = try await cluster.purchase(cluster.transaction(), through: cluster.instances[0].port)
                let token = try #require(bought.token, "\(bought.summary)")
                let base = "https://localhost:\(cluster.edgePort)"
                let resolve = "localhost:\(cluster.edgePort):127.0.0.1"
                for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
                    let list = try await OffPool.run {
                        try SpawnedProcess.run(curl, ["-sS", flag, "--cacert", certificate, "--resolve", resolve,
                                                                 "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
                                                                 base + WirePath.productsV2.pattern])
                    }
                    #expect(list.status == 0 && list.output == "200 \(version)", "\(flag): \(list.output)")
                }
                let out = cluster.tree.path + "/range.bin"
                let range = try await OffPool.run {
                    try SpawnedProcess.run(curl, ["-sS", "--http2", "--cacert", certificate, "--resolve", resolve, "-r", "1000-1999",
                                                             "-H", "Authorization: Bearer \(token)", "-o", out, "-w", "%{http_code}",
                                                             base + WirePath.packFile(pack: "level2", version: 1, path: "stages.bin")])
                }
                #expect(range.status == 0 && range.output == "206", "\(range.output)")
                let direct = try await ScaleOutCluster.get(cluster.instances[1].port, WirePath.packFile(pack: "level2", version: 1, path: "stages.bin"),
                                                           token: token, headers: ["Range": "bytes=1000-1999"])
                #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(direct.body))
                #expect(direct.body.count == 1000)
            }
        }
    }
}
