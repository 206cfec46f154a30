import DepotServer
import DepotTestSupport
import Testing

/// The edge routes (scale-out §6) are on the public port whatever `--ops-listen` says: nginx load-balances the
/// instances' public ports and asks them `GET /v1/edge/authorize` and `GET /v1/edge/origin/…`. With an ops
/// listener the public port once had neither (`404`), so nginx turned every authorize answer into its
/// fallback, fetched every pack file from the file URL and its cache stayed empty.
@Suite struct EdgeRoutesBesideOpsListenerTests {
    static let secret = "edge-secret-beside-the-ops-listener-0123456789"

    @Test func thePublicPortServesTheEdgeRoutesBesideAnOpsListener() async throws {
        try await PackFixture.with(configure: {
            $0.edgeSecret = Self.secret
            $0.opsListen = ListenAddress(host: "127.0.0.1", port: 0)
        }) { fixture in
            #expect(fixture.depot.app.opsURL != nil)
            let file = fixture.fileURL("range.bin")
            let origin = "/v1/edge/origin/" + file.dropFirst("/v1/packs/".count)
            let (authorize, filled, refused) = try await OffPool.run {
                (try fixture.request("/v1/edge/authorize", ["X-Original-URI": file, EdgeRoutes.secretField: Self.secret]),
                 try fixture.request(origin, [EdgeRoutes.secretField: Self.secret], credential: .none),
                 try fixture.request(origin, [:], credential: .none))
            }
            #expect(authorize.status == 204, "\(authorize.summary)")
            #expect(filled.status == 200, "\(filled.summary)")
            let sameBytes = filled.body == fixture.contents["range.bin"]
            #expect(sameBytes, "the origin route sent other bytes than range.bin's")
            #expect(refused.status == 403, "\(refused.summary)")
        }
    }
}
