import DepotTestSupport
import DepotWire
import Foundation
import Testing

extension ScaleOutTests {
    /// scale-out §3 through the edge of §6: PostgreSQL away past `--ledger-stale-max` on every instance. A pack
    /// request then gets Depot's own `503 ledger_unavailable` with `Retry-After`, and the product lists and
    /// `/healthz` keep answering `200` through nginx. The printed configuration once had nginx count every `503`
    /// of a GET as a failed attempt (`proxy_next_upstream … http_503` with `max_fails=1`): the pack request made
    /// nginx mark each instance down in turn and answer its own `502` page, and the product lists were `502`
    /// ("no live upstreams") for the next 2 s after every pack request.
    @Suite(.serialized) struct ScaleOutEdgeOutageTests {
        @Test func pastStaleMaxTheEdgePassesDepotsAnswersAndKeepsTheLists() async throws {
            let postgres = try await PostgresCluster.start(durable: false)
            do {
                try await Self.outage(postgres)
            } catch {
                try? await postgres.destroy()
                throw error
            }
            try await postgres.destroy()
        }

        private static func outage(_ postgres: PostgresCluster) async throws {
            try await ScaleOutCluster.run(instances: 2, postgres: postgres, edge: true, extraArguments: ["--ledger-stale-max", "1"]) { cluster in
                let edge = cluster.edgePort
                let bought = try await cluster.purchase(cluster.transaction(), through: edge)
                let token = try #require(bought.token, "\(bought.summary)")
                #expect(try await ScaleOutCluster.fileStatus(edge, token: token).status == 200)

                try await postgres.stop(mode: .fast)
                // Bounded: downloads are refused once the state is older than --ledger-stale-max (1 s).
                var refused: RawResponse?
                for _ in 0..<300 {
                    let answer = try await ScaleOutCluster.fileStatus(edge, token: token)
                    if answer.status != 200 { refused = answer; break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                let stale = try #require(refused, "downloads through the edge were never refused with PostgreSQL stopped")
                #expect(stale.status == 503 && stale.errorCode == "ledger_unavailable" && stale.header("Retry-After") != nil,
                        "\(stale.summary)")
                // Right after a refused download, and after another: the lists and /healthz still answer through nginx.
                for round in 1...2 {
                    let lists = try await ScaleOutCluster.get(edge, "/products_v1.json")
                    #expect(lists.status == 200, "round \(round): \(lists.summary)")
                    let health = try await ScaleOutCluster.get(edge, WirePath.health.pattern)
                    #expect(health.status == 200, "round \(round): \(health.summary)")
                    let again = try await ScaleOutCluster.fileStatus(edge, token: token)
                    #expect(again.status == 503 && again.errorCode == "ledger_unavailable", "round \(round): \(again.summary)")
                }
                try await postgres.restart()
            }
        }
    }
}
