import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import HTTP
import Testing

/// spec §2.2, §4.4: publishing a new version while the old one serves — in-flight downloads finish on the old
/// bytes, old URLs keep working, the redirect moves, and a validator of the old bytes never splices new ones.
@Suite struct PackPublishTests {
    @Test func newVersionWhileTheOldOneServes() async throws {
        try await PackFixture.with(extraFiles: PackFixture.hugeFiles()) { fixture in
            let v1 = fixture.contents
            let token = fixture.token()

            // A download of the huge file in flight: head and some bytes read, most of it still on the server.
            let inFlight = try fixture.depot.connect()
            inFlight.limitReceiveBuffer(to: 16 * 1024)
            inFlight.send("GET \(fixture.fileURL(PackFixture.hugeFile)) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            var received: [UInt8] = []
            while received.count < 100_000 {
                let piece = try #require(inFlight.readSome())
                try #require(!piece.isEmpty)
                received += piece
            }

            // Version 2: huge.bin and range.bin change, notes.txt stays, noext goes, new.bin arrives.
            var v2 = v1
            v2[PackFixture.hugeFile] = PackFixture.bytes(PackFixture.hugeSize, seed: 1007)
            v2["range.bin"] = PackFixture.bytes(1000, seed: 1001)
            v2["noext"] = nil
            v2["new.bin"] = Array("new in version 2".utf8)
            let published2: Int64 = 4_102_444_817   // 2100-01-01T00:00:17Z: dates past 2038 work
            let manifest2 = try PackFixture.publish(v2, into: fixture.depot, at: published2)
            #expect(manifest2.version == 2)
            #expect(fixture.depot.app.reloadCatalog())

            // The in-flight download completes with the old bytes.
            let headEnd = try #require(RawBytes.find([13, 10, 13, 10], in: received))
            while received.count < headEnd + 4 + PackFixture.hugeSize {
                let piece = try #require(inFlight.readSome())
                try #require(!piece.isEmpty)
                received += piece
            }
            let body = Array(received[(headEnd + 4)...])
            #expect(body.count == PackFixture.hugeSize)
            #expect(Hex.encode(SHA256.hash(body)) == (try fixture.entry(PackFixture.hugeFile)).sha256)

            // Old URLs still serve the old bytes and manifest.
            let oldRange = try fixture.request(fixture.fileURL("range.bin", version: 1))
            #expect(oldRange.body == v1["range.bin"])
            #expect(oldRange.header("ETag") == (try fixture.entry("range.bin")).etag)
            #expect(try fixture.request(fixture.fileURL("noext", version: 1)).body == v1["noext"])
            #expect(try fixture.request("/v1/packs/testpack/1/manifest").body == fixture.depot.tree.read("content/testpack/1/manifest.json"))

            // The redirect points to the new version; the same token opens it.
            let redirect = try fixture.request("/v1/packs/testpack/manifest?token=\(token)", credential: .none)
            #expect(redirect.status == 307)
            #expect(redirect.header("Location") == "/v1/packs/testpack/2/manifest?token=\(token)")
            let newManifest = try fixture.request("/v1/packs/testpack/2/manifest", credential: .bearer(token))
            #expect(newManifest.status == 200)
            #expect(try newManifest.body == manifest2.encoded())
            #expect(manifest2.published == "2100-01-01T00:00:17Z")
            #expect(newManifest.header("Last-Modified") == "Fri, 01 Jan 2100 00:00:17 GMT")
            #expect(try fixture.request(fixture.fileURL("new.bin", version: 2)).header("Last-Modified") == "Fri, 01 Jan 2100 00:00:17 GMT")
            #expect(try fixture.request(fixture.fileURL("new.bin", version: 2)).body == v2["new.bin"])
            #expect(try fixture.request(fixture.fileURL("noext", version: 2)).status == 404)

            // If-Range with the old file's validators against the new version never splices: the full new file.
            let oldTag = try fixture.entry("range.bin").etag
            let newTag = try #require(manifest2.file(path: "range.bin")).etag
            #expect(oldTag != newTag)
            for validator in [oldTag, HTTPDate.format(PackFixture.publishTime)] {
                let resumed = try fixture.request(fixture.fileURL("range.bin", version: 2), ["Range": "bytes=500-", "If-Range": validator])
                #expect(resumed.status == 200, "\(validator)")
                #expect(resumed.body == v2["range.bin"])
                #expect(resumed.header("ETag") == newTag)
                #expect(resumed.header("Content-Range") == nil)
            }
            // The new validators do resume the new file.
            for validator in [newTag, HTTPDate.format(published2)] {
                let resumed = try fixture.request(fixture.fileURL("range.bin", version: 2), ["Range": "bytes=500-", "If-Range": validator])
                #expect(resumed.status == 206)
                #expect(resumed.body == Array(v2["range.bin"]![500...]))
            }
            // A file whose bytes did not change keeps its ETag, so resuming it across versions gives the right bytes.
            let notesTag = try fixture.entry("notes.txt").etag
            #expect(manifest2.file(path: "notes.txt")?.etag == notesTag)
            let notes = try fixture.request(fixture.fileURL("notes.txt", version: 2), ["Range": "bytes=5-", "If-Range": notesTag])
            #expect(notes.status == 206)
            #expect(notes.body == Array(v1["notes.txt"]![5...]))

            // Both versions check clean.
            let summary = DepotCheck.run(paths: DepotPaths(catalogDirectory: fixture.depot.catalogDirectory,
                                                           contentDirectory: fixture.depot.contentDirectory,
                                                           dataDirectory: fixture.depot.dataDirectory))
            #expect(summary.problems.isEmpty, "\(summary.problems)")
        }
    }
}

extension PackPublishTests {
    /// `depot prune` removes an old version from disk while a download of it is in flight: the download still
    /// completes (the open file outlives its name), and the version is gone for new requests.
    @Test func pruneDuringAnInFlightDownload() async throws {
        try await PackFixture.with(extraFiles: PackFixture.hugeFiles()) { fixture in
            let token = fixture.token()
            let inFlight = try fixture.depot.connect()
            inFlight.limitReceiveBuffer(to: 16 * 1024)
            inFlight.send("GET \(fixture.fileURL(PackFixture.hugeFile)) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            var received = try #require(inFlight.readSome())
            try PackFixture.publish(["other.bin": [1, 2, 3]], into: fixture.depot, at: PackFixture.publishTime + 10)
            let paths = DepotPaths(catalogDirectory: fixture.depot.catalogDirectory, contentDirectory: fixture.depot.contentDirectory,
                                   dataDirectory: fixture.depot.dataDirectory)
            let removed = try Publisher(paths: paths).prune(keep: 1).map(\.name)
            #expect(removed.contains("testpack/1"))
            #expect(!FileManager.default.fileExists(atPath: fixture.depot.contentDirectory + "/testpack/1"))
            #expect(fixture.depot.app.reloadCatalog())

            let headEnd = try #require(RawBytes.find([13, 10, 13, 10], in: received))
            while received.count < headEnd + 4 + PackFixture.hugeSize {
                let piece = try #require(inFlight.readSome())
                try #require(!piece.isEmpty)
                received += piece
            }
            #expect(Array(received[(headEnd + 4)...]) == fixture.contents[PackFixture.hugeFile])
            #expect(try fixture.request(fixture.fileURL("range.bin", version: 1)).status == 404)
            #expect(try fixture.request("/v1/packs/testpack/1/manifest").status == 404)
            #expect(try fixture.request(fixture.fileURL("other.bin", version: 2)).body == [1, 2, 3])
        }
    }
}

extension PackPublishTests {
    /// Descriptors this process holds on files named `name` under `directory` (from /proc/self/fd; a pruned
    /// file shows where prune moved it, with " (deleted)").
    static func openDescriptors(named name: String, under directory: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix(directory) && ($0.hasSuffix("/" + name) || $0.hasSuffix("/" + name + " (deleted)")) }
    }

    /// After a prune, every loop closes the files it opened from the pruned version at once, including a loop
    /// that sees no more pack requests (else the disk space is not freed).
    @Test func pruneReleasesTheFilesIdleLoopsHeldOpen() async throws {
        try await PackFixture.with(extraFiles: [:]) { fixture in
            let content = fixture.depot.contentDirectory
            try PackFixture.publish(["other.bin": [1, 2, 3]], into: fixture.depot, at: PackFixture.publishTime + 10)
            // Version 1 served on each loop (connections are handed out round-robin), so each loop caches it open.
            // The watcher may still swap in the publish meanwhile (which drops them): serve again until they stay.
            let cached = try await eventually(within: 5) {
                for _ in 0..<4 where try fixture.request(fixture.fileURL("range.bin", version: 1)).status != 200 { return false }
                return !Self.openDescriptors(named: "range.bin", under: content).isEmpty
            }
            #expect(cached, "the loops keep served files open")
            let paths = DepotPaths(catalogDirectory: fixture.depot.catalogDirectory, contentDirectory: fixture.depot.contentDirectory,
                                   dataDirectory: fixture.depot.dataDirectory)
            #expect(try Publisher(paths: paths).prune(keep: 1).map(\.name).contains("testpack/1"))
            #expect(fixture.depot.app.reloadCatalog())
            // No pack request follows: the loops drop the files by themselves.
            #expect(try await eventually(within: 5) { Self.openDescriptors(named: "range.bin", under: content).isEmpty },
                    "\(Self.openDescriptors(named: "range.bin", under: content))")
        }
    }
}

/// Byte search in raw responses.
enum RawBytes {
    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }
}
