import Foundation
import Testing
import DepotClient

@Suite struct ProductListTests {
    let v1 = "[\"com.example.depot.level2\", \"com.example.depot.level3\"]"
    let v2 = """
        {"version": 2, "updated": "2026-11-30T02:33:58Z", "products": [
          {"id": "com.example.depot.coins", "type": "consumable", "title": "Coins", "description": "A bag.", "pack": null},
          {"id": "com.example.depot.level2", "type": "non-consumable", "title": "Level 2: Glacier",
           "description": "Twelve new stages on the ice.",
           "pack": {"id": "level2", "version": 3, "downloadBytes": 5242880}},
          {"id": "com.example.depot.vip", "type": "loyalty-tier", "title": "VIP"}]}
        """
    let lastModified = "Mon, 30 Nov 2026 02:33:58 GMT"

    @Test func firstFetchIsFromNetworkThenA304ServesTheCache() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v1.json", v1, etag: "\"a1\"", lastModified: lastModified)
        let client = server.client(cacheDirectory: cache.url)

        let first = try await client.productIDs()
        #expect(first.source == .network)
        #expect(!first.isFromCache)
        #expect(first.list == ["com.example.depot.level2", "com.example.depot.level3"])
        #expect(server.requests[0].header("If-None-Match") == nil)

        let second = try await client.productIDs()
        #expect(second.source == .notModified)
        #expect(second.isFromCache)
        #expect(second.list == first.list)
        // RFC 9110 §13.1: both validators go back as stored.
        #expect(server.requests[1].header("If-None-Match") == "\"a1\"")
        #expect(server.requests[1].header("If-Modified-Since") == lastModified)
    }

    @Test func cacheSurvivesANewClientInstance() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v1.json", v1, etag: "\"a1\"", lastModified: lastModified)
        _ = try await server.client(cacheDirectory: cache.url).productIDs()
        let again = try await server.client(cacheDirectory: cache.url).productIDs()
        #expect(again.source == .notModified)
        #expect(again.list.count == 2)
    }

    @Test func aChangedListReplacesTheCache() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v1.json", v1, etag: "\"a1\"", lastModified: lastModified)
        let client = server.client(cacheDirectory: cache.url)
        _ = try await client.productIDs()
        server.setList("products_v1.json", "[\"com.example.depot.level4\"]", etag: "\"a2\"", lastModified: lastModified + "x")
        let changed = try await client.productIDs()
        #expect(changed.source == .network)
        #expect(changed.list == ["com.example.depot.level4"])
        #expect(changed.etag == "\"a2\"")
        server.update { $0.offline = true }
        #expect(try await client.productIDs().list == ["com.example.depot.level4"])
    }

    @Test func offlineServesTheCachedList() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v2.json", v2, etag: "\"b1\"", lastModified: lastModified)
        let client = server.client(cacheDirectory: cache.url)
        let fresh = try await client.products()
        server.update { $0.offline = true }
        let offline = try await client.products()
        #expect(offline.source == .offline)
        #expect(offline.isFromCache)
        #expect(offline.list == fresh.list)
        guard case .transport = offline.offlineReason else {
            Issue.record("expected a transport reason, got \(String(describing: offline.offlineReason))")
            return
        }
    }

    @Test func offlineWithoutCacheThrowsTransport() async {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.update { $0.offline = true }
        let error = await depotError { _ = try await server.client(cacheDirectory: cache.url).productIDs() }
        guard case .transport = error else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test func serverErrorFallsBackToCacheButNotWithoutOne() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v1.json", v1, etag: "\"a1\"", lastModified: lastModified)
        let client = server.client(cacheDirectory: cache.url)
        server.update { $0.listOverride = .error(503, "unavailable", headers: ["Retry-After": "30"]) }
        let error = await depotError { _ = try await client.productIDs() }
        guard case .retryLater(let after) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(after == 30)

        server.update { $0.listOverride = nil }
        _ = try await client.productIDs()
        server.update { $0.listOverride = .error(503, "unavailable") }
        let stale = try await client.productIDs()
        #expect(stale.source == .offline)
        #expect(stale.list.count == 2)
    }

    @Test func withoutCacheDirectoryNothingIsConditional() async throws {
        let server = FakeDepot()
        defer { server.close() }
        server.setList("products_v1.json", v1, etag: "\"a1\"", lastModified: lastModified)
        let client = server.client(cacheDirectory: nil)
        _ = try await client.productIDs()
        let second = try await client.productIDs()
        #expect(second.source == .network)
        #expect(server.requests[1].header("If-None-Match") == nil)
    }

    @Test func v2DecodesProductsPacksAndUnknownKinds() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v2.json", v2, etag: "\"b1\"", lastModified: lastModified)
        let list = try await server.client(cacheDirectory: cache.url).products().list
        #expect(list.version == 2)
        #expect(list.updated == Date(timeIntervalSince1970: 1_796_006_038))
        #expect(list.products.map(\.id) == ["com.example.depot.coins", "com.example.depot.level2", "com.example.depot.vip"])
        #expect(list.products[0].type == .consumable)
        #expect(list.products[0].pack == nil)
        #expect(list.products[1].type == .nonConsumable)
        #expect(list.products[1].pack == ProductListV2.Pack(id: "level2", version: 3, downloadBytes: 5_242_880))
        #expect(list.products[2].type.rawValue == "loyalty-tier")
        #expect(list.products[2].description == "")
    }

    @Test func malformedListIsAnInvalidResponseAndNotCached() async throws {
        let server = FakeDepot()
        let cache = ScratchDirectory()
        defer { server.close(); cache.remove() }
        server.setList("products_v1.json", "{\"not\": \"a list\"}", etag: "\"a1\"", lastModified: lastModified)
        let client = server.client(cacheDirectory: cache.url)
        let error = await depotError { _ = try await client.productIDs() }
        guard case .invalidResponse = error else { Issue.record("got \(String(describing: error))"); return }
        server.setList("products_v1.json", v1, etag: "\"a1\"", lastModified: lastModified)
        _ = try await client.productIDs()
        #expect(server.requests[1].header("If-None-Match") == nil)
    }
}
