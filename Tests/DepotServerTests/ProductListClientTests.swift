import DepotTestSupport
import Foundation
import Testing
import DepotServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The lists through real HTTP clients on loopback: URLSession (as the app uses) and curl.
@Suite struct ProductListClientTests {
    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 10
        return URLSession(configuration: configuration)
    }

    static func fetch(_ session: URLSession, _ url: URL, headers: [String: String] = [:]) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test(arguments: ListPath.allCases)
    func urlSessionGetsTheListAndRevalidates(_ list: ListPath) async throws {
        try await withDepot { depot in
            let raw = try await depot.send("GET", list.rawValue)
            let session = Self.session()
            defer { session.invalidateAndCancel() }
            let url = try #require(URL(string: depot.baseURL + list.rawValue))
            let (data, response) = try await Self.fetch(session, url)
            #expect(response.statusCode == 200)
            // Whatever URLSession negotiated, it hands over the identity bytes.
            #expect([UInt8](data) == raw.body)
            let etag = try #require(response.value(forHTTPHeaderField: "ETag"))
            #expect(response.value(forHTTPHeaderField: "Cache-Control") == "public, no-cache")
            let (again, revalidated) = try await Self.fetch(session, url, headers: ["If-None-Match": etag])
            #expect(revalidated.statusCode == 304)
            #expect(again.isEmpty)
            #expect(revalidated.value(forHTTPHeaderField: "ETag") == etag)
            let lastModified = try #require(response.value(forHTTPHeaderField: "Last-Modified"))
            let (_, byDate) = try await Self.fetch(session, url, headers: ["If-Modified-Since": lastModified])
            #expect(byDate.statusCode == 304)
            let (fresh, changed) = try await Self.fetch(session, url, headers: ["If-None-Match": "\"stale\""])
            #expect(changed.statusCode == 200)
            #expect([UInt8](fresh) == raw.body)
        }
    }

    @Test(arguments: ListPath.allCases)
    func curlCompressedGetsAndDecodesTheGzipVariant(_ list: ListPath) async throws {
        let curl = try #require(ProcessRunner.which("curl"), "curl is on the machine")
        try await withDepot { depot in
            let identity = try await depot.send("GET", list.rawValue)
            let gzip = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip")])
            let directory = TemporaryDirectory("depot-curl")
            let url = depot.baseURL + list.rawValue
            let result = try await OffPool.run {
                try ProcessRunner.run(curl, ["-sS", "--compressed", "-D", directory.path + "/head", "-o", directory.path + "/body", url])
            }
            #expect(result.status == 0, "\(result.stderr)")
            let head = String(decoding: directory.read("head") ?? [], as: UTF8.self).lowercased()
            #expect(head.hasPrefix("http/1.1 200"))
            #expect(head.contains("content-encoding: gzip\r\n"))
            #expect(head.contains("etag: \(try #require(gzip.header("ETag")).lowercased())\r\n"))
            #expect(head.contains("content-length: \(gzip.body.count)\r\n"))
            #expect(directory.read("body") == identity.body)

            // curl without --compressed gets the identity bytes.
            let plain = try await ProcessRunner.run(curl, ["-sS", url])
            #expect(Array(plain.stdout.utf8) == identity.body)
        }
    }
}
