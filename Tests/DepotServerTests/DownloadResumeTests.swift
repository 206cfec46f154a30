import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// spec §4.4: resumable downloads on loopback with real clients — curl killed mid-transfer and resumed with
/// `-C -`, and URLSession fetching the second half with `Range` + `If-Range` — ending in the manifest's SHA-256.
@Suite struct DownloadResumeTests {
    @Test func curlKilledMidwayResumes() async throws {
        let curl = try #require(ProcessRunner.which("curl"))
        try await PackFixture.with(big: true) { fixture in
            let entry = try fixture.entry(PackFixture.bigFile)
            let url = fixture.depot.baseURL + entry.url
            let out = TemporaryDirectory("curl")
            let path = out.path + "/" + PackFixture.bigFile
            let firstToken = fixture.token()

            // First attempt: rate-limited to stdout, SIGKILLed once some bytes have arrived.
            let partial = try await OffPool.run { () throws -> Data in
                let child = try SpawnedChild.start(curl, ["-s", "--limit-rate", "1M", "-H", "Authorization: Bearer \(firstToken)", url])
                var received = Data()
                while received.count < 256 * 1024 {
                    let piece = child.output.availableData
                    if piece.isEmpty { break }
                    received.append(piece)
                }
                child.send(SIGKILL)
                child.waitForExit()
                #expect(child.endedBySignal)
                return received
            }
            #expect(partial.count >= 256 * 1024)
            #expect(Int64(partial.count) < entry.size)
            try partial.write(to: URL(fileURLWithPath: path))

            // Resume with a fresh token in the query (as after `token_expired`): curl asks for `bytes=<size>-`.
            let secondToken = fixture.token(transaction: "1000000000000001", account: "resumer")
            let resumed = try await OffPool.run {
                try ProcessRunner.run(curl, ["-s", "-S", "-C", "-", "-o", path, "-w", "%{http_code} %{size_download}",
                                             url + "?token=" + secondToken])
            }
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(resumed.stdout == "206 \(entry.size - Int64(partial.count))")
            let sum = try await ProcessRunner.run("/usr/bin/sha256sum", [path])
            #expect(String(sum.stdout.prefix(64)) == entry.sha256)
            #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == fixture.contents[PackFixture.bigFile])
        }
    }

    /// curl asked to resume a complete file gets a 416 and leaves it intact (the end of a download that already finished).
    @Test func curlResumingACompleteFile() async throws {
        let curl = try #require(ProcessRunner.which("curl"))
        let fixture = try await PackFixture.shared.value
        let entry = try fixture.entry("chunks.bin")
        let out = TemporaryDirectory("curl-done")
        let path = out.path + "/chunks.bin"
        try Data(try #require(fixture.contents["chunks.bin"])).write(to: URL(fileURLWithPath: path))
        let token = fixture.token()
        let result = try await OffPool.run {
            try ProcessRunner.run(curl, ["-s", "-C", "-", "-o", path, "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)",
                                         fixture.depot.baseURL + entry.url])
        }
        #expect(result.stdout == "416")
        #expect(String((try await ProcessRunner.run("/usr/bin/sha256sum", [path])).stdout.prefix(64)) == entry.sha256)
    }

    /// URLSession: the first half, then the second half with `Range` + `If-Range`; every chunk and the whole
    /// file hash to the manifest's values; no `Content-Encoding` although URLSession asks for gzip.
    @Test func urlSessionSecondHalf() async throws {
        try await PackFixture.with(big: true) { fixture in
            let entry = try fixture.entry(PackFixture.bigFile)
            let url = try #require(URL(string: fixture.depot.baseURL + entry.url))
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            let half = entry.size / 2 + 12_345   // deliberately not on a chunk boundary

            var first = URLRequest(url: url)
            first.setValue("Bearer " + fixture.token(), forHTTPHeaderField: "Authorization")
            first.setValue("bytes=0-\(half - 1)", forHTTPHeaderField: "Range")
            let (head, headResponse) = try await session.data(for: first)
            let firstResponse = try #require(headResponse as? HTTPURLResponse)
            #expect(firstResponse.statusCode == 206)
            #expect(Int64(head.count) == half)
            let etag = try #require(firstResponse.value(forHTTPHeaderField: "ETag"))
            #expect(etag == entry.etag)

            var second = URLRequest(url: url)
            second.setValue("Bearer " + fixture.token(), forHTTPHeaderField: "Authorization")
            second.setValue("bytes=\(half)-", forHTTPHeaderField: "Range")
            second.setValue(etag, forHTTPHeaderField: "If-Range")
            let (tail, tailResponse) = try await session.data(for: second)
            let secondResponse = try #require(tailResponse as? HTTPURLResponse)
            #expect(secondResponse.statusCode == 206)
            #expect(secondResponse.value(forHTTPHeaderField: "Content-Range") == "bytes \(half)-\(entry.size - 1)/\(entry.size)")
            #expect(secondResponse.value(forHTTPHeaderField: "Content-Encoding") == nil)

            let whole = [UInt8](head) + [UInt8](tail)
            #expect(Int64(whole.count) == entry.size)
            #expect(Hex.encode(SHA256.hash(whole)) == entry.sha256)
            for chunk in entry.chunks {
                let slice = whole[Int(chunk.offset)..<Int(chunk.offset + chunk.length)]
                #expect(Hex.encode(SHA256.hash(slice)) == chunk.sha256, "chunk at \(chunk.offset)")
            }
        }
    }

    /// A client that downloads chunk by chunk as the plan says (Range per chunk, If-Range, per-chunk hash).
    @Test func chunkByChunkFollowingThePlan() async throws {
        let fixture = try await PackFixture.shared.value
        var have: Int64 = 0
        var assembled: [String: [UInt8]] = [:]
        var rounds = 0
        while have < fixture.manifest.downloadBytes {
            rounds += 1
            try #require(rounds < 100)
            let response = try fixture.request("/v1/packs/testpack/1/manifest?available=\((16 << 20) + 6000)&have=\(have)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let plan = try #require(object["plan"] as? [String: Any])
            let next = try #require(plan["next"] as? [[String: Any]])
            if next.isEmpty {
                // Only empty files remain between `have` and the end: nothing to fetch.
                #expect((plan["remainingBytes"] as? NSNumber)?.int64Value == 0)
                break
            }
            for step in next {
                let path = try #require(step["path"] as? String)
                let offset = try #require((step["offset"] as? NSNumber)?.int64Value)
                let length = try #require((step["length"] as? NSNumber)?.int64Value)
                let file = try fixture.entry(path)
                let part = try fixture.request(file.url, ["Range": "bytes=\(offset)-\(offset + length - 1)", "If-Range": file.etag])
                #expect(part.status == 206 || (part.status == 200 && offset == 0 && length == file.size))
                let chunk = try #require(file.chunks.first { $0.offset == offset })
                #expect(Hex.encode(SHA256.hash(part.body)) == chunk.sha256)
                assembled[path, default: []] += part.body
                have += length
            }
        }
        #expect(have == fixture.manifest.downloadBytes)
        for file in fixture.manifest.files where file.size > 0 {
            #expect(assembled[file.path] == fixture.contents[file.path], "\(file.path)")
        }
    }
}
