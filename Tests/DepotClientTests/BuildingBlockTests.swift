import Foundation
import Testing
import DepotClient

/// The small parts: hashing, Content-Range, path rules, rate, journal carry-over.
@Suite struct BuildingBlockTests {
    /// FIPS 180-4 test vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func defaultHasherIsSHA256(input: String, digest: String) throws {
        #expect(try SHA256ChunkHasher().sha256(Data(input.utf8)).hexString == digest)
    }

    /// A digest is compared with the manifest's hex text digit by digit: either case matches, anything else is a
    /// mismatch (one digit off, a digit too many or too few, a character that is no hex digit).
    @Test func aDigestMatchesItsHexTextOnly() throws {
        let digest = try SHA256ChunkHasher().sha256(Data("abc".utf8))
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(digest.matchesHex(hex))
        #expect(digest.matchesHex(hex.uppercased()))
        #expect(!digest.matchesHex(String(hex.dropLast()) + "e"))
        #expect(!digest.matchesHex("ca" + hex.dropFirst(2)))
        #expect(!digest.matchesHex(String(hex.dropLast())))
        #expect(!digest.matchesHex(hex + "0"))
        #expect(!digest.matchesHex(String(hex.dropLast()) + "g"))
        #expect(!digest.matchesHex(""))
        #expect(Data().matchesHex(""))
        #expect(Data([0x0f, 0xa0]).matchesHex("0fA0") && !Data([0x0f, 0xa0]).matchesHex("f0a0"))
    }

    @Test func defaultHasherHandlesAMebibyte() throws {
        let data = Data(repeating: 0x61, count: 1 << 20)
        #expect(try SHA256ChunkHasher().sha256(data).count == 32)
    }

    /// RFC 9110 §14.4.
    @Test(arguments: [
        ("bytes 0-999/2500", ContentRange(first: 0, last: 999, completeLength: 2500)),
        ("bytes 1000-1999/*", ContentRange(first: 1000, last: 1999, completeLength: nil)),
        ("BYTES 5-5/6", ContentRange(first: 5, last: 5, completeLength: 6)),
        ("bytes 7-1/10", nil),
        ("bytes 0-9/9", nil),
        ("bytes */10", nil),
        ("items 0-1/2", nil),
        ("bytes 0-1", nil),
    ] as [(String, ContentRange?)])
    func contentRangeParsing(field: String, expected: ContentRange?) {
        #expect(ContentRange(field) == expected)
    }

    @Test(arguments: ["stages.bin", "audio/theme.ogg", "maps/deep/level 1.map", "..hidden", "a..b/c", ".config"])
    func safePathsPass(path: String) throws {
        try ManifestPath.check(path, reserved: ".depot-download.json")
    }

    @Test(arguments: ["../x", "a/../../x", "/abs", "a\\b", "a\0b", "", "a//b", "a/", "./a", "a/./b", "..", ".depot-download.json"])
    func unsafePathsFail(path: String) {
        #expect(throws: DepotClientError.self) { try ManifestPath.check(path, reserved: ".depot-download.json") }
    }

    @Test func manifestValidationRefusesGapsAndFileDirectoryClashes() {
        let hash = String(repeating: "0", count: 64)
        func file(_ path: String, _ chunks: [(Int64, Int64)], size: Int64) -> DownloadManifest.File {
            DownloadManifest.File(path: path, size: size, sha256: hash, etag: "\"e\"", url: "/f",
                                  chunks: chunks.map { .init(offset: $0.0, length: $0.1, sha256: hash) })
        }
        let gap = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 10,
                                   files: [file("a", [(0, 10), (11, 5)], size: 16)])
        #expect(throws: DepotClientError.self) { try gap.validated(reserved: "j") }
        let short = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 10, files: [file("a", [(0, 10)], size: 12)])
        #expect(throws: DepotClientError.self) { try short.validated(reserved: "j") }
        let clash = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 10,
                                     files: [file("a", [], size: 0), file("a/b", [], size: 0)])
        #expect(throws: DepotClientError.self) { try clash.validated(reserved: "j") }
        let good = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 10,
                                    files: [file("a/b", [(0, 10), (10, 2)], size: 12), file("c", [], size: 0)])
        #expect(throws: Never.self) { try good.validated(reserved: "j") }
        // A hostile server: a chunk larger than chunkSize, a huge chunkSize, sizes that overflow Int64.
        let oversized = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 10, files: [file("a", [(0, 11)], size: 11)])
        #expect(throws: DepotClientError.self) { try oversized.validated(reserved: "j") }
        let hugeChunks = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: Int64.max,
                                          files: [file("a", [(0, Int64.max)], size: Int64.max)])
        #expect(throws: DepotClientError.self) { try hugeChunks.validated(reserved: "j") }
        var overflowing = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 1 << 30,
                                           files: [file("a", [(0, 1 << 30)], size: 1 << 30), file("b", [(0, 1 << 30)], size: 1 << 30)])
        overflowing.files[1].size = Int64.max
        #expect(throws: DepotClientError.self) { try overflowing.validated(reserved: "j") }
    }

    @Test func rateSmoothsTowardsNewSamples() {
        var rate = TransferRate(timeConstant: 5)
        rate.record(bytes: 1000, seconds: 0)          // no time yet: carried over
        #expect(rate.bytesPerSecond == nil)
        rate.record(bytes: 1000, seconds: 1)
        #expect(rate.bytesPerSecond == 2000)
        // Before τ has passed: the plain average so far, so a small first sample does not linger.
        rate.record(bytes: 4000, seconds: 1)
        #expect(rate.bytesPerSecond == 3000)
        rate.record(bytes: 9000, seconds: 3)          // 5 s observed: from here on, the moving average
        let before = rate.bytesPerSecond!
        rate.record(bytes: 8000, seconds: 1)
        let weight = 1 - exp(-1.0 / 5)
        #expect(abs(rate.bytesPerSecond! - (before + weight * (8000 - before))) < 1e-9)
    }

    @Test func aTinyFirstSampleDoesNotHoldTheRateDown() {
        var rate = TransferRate(timeConstant: 5)
        rate.record(bytes: 15, seconds: 0.002)        // a 15-byte file first
        for _ in 0..<100 { rate.record(bytes: 1 << 20, seconds: 0.01) }   // then 100 MiB/s
        #expect(rate.bytesPerSecond! > 90 * 1024 * 1024)
    }

    @Test func progressMirrorsSKDownload() {
        let unknown = PackDownloadProgress(completedBytes: 10, totalBytes: 40, bytesPerSecond: nil, currentPath: nil)
        #expect(unknown.progress == 0.25)
        #expect(unknown.timeRemaining == nil)
        let known = PackDownloadProgress(completedBytes: 10, totalBytes: 40, bytesPerSecond: 10, currentPath: nil)
        #expect(known.timeRemaining == 3)
        #expect(PackDownloadProgress(completedBytes: 0, totalBytes: 0, bytesPerSecond: nil, currentPath: nil).progress == 1)
    }

    @Test func journalKeepsUnchangedFilesOnly() {
        let hash = String(repeating: "1", count: 64)
        func file(_ path: String, etag: String, size: Int64, chunk: Int64) -> DownloadManifest.File {
            var chunks: [DownloadManifest.Chunk] = []
            var offset: Int64 = 0
            while offset < size { chunks.append(.init(offset: offset, length: min(chunk, size - offset), sha256: hash)); offset += chunk }
            return DownloadManifest.File(path: path, size: size, sha256: hash, etag: etag, url: "/\(path)", chunks: chunks)
        }
        let v1 = DownloadManifest(pack: "p", version: 1, productId: nil, chunkSize: 10, files: [
            file("same", etag: "\"a\"", size: 30, chunk: 10), file("changed", etag: "\"b\"", size: 30, chunk: 10),
            file("rechunked", etag: "\"c\"", size: 30, chunk: 10), file("gone", etag: "\"d\"", size: 5, chunk: 10),
        ])
        var journal = DownloadJournal(pack: "p", version: 1).adopting(v1).journal
        for path in ["same", "changed", "rechunked", "gone"] { journal.files[path]?.verified = [0] }
        let v2 = DownloadManifest(pack: "p", version: 2, productId: nil, chunkSize: 10, files: [
            file("same", etag: "\"a\"", size: 30, chunk: 10), file("changed", etag: "\"b2\"", size: 30, chunk: 10),
            file("rechunked", etag: "\"c\"", size: 30, chunk: 20), file("new", etag: "\"e\"", size: 3, chunk: 10),
        ])
        let (next, restarted, dropped) = journal.adopting(v2)
        #expect(next.version == 2)
        #expect(next.files["same"]?.verified == [0])
        #expect(next.files["changed"]?.verified == [])
        #expect(next.files["rechunked"]?.verified == [])
        #expect(next.files["new"]?.verified == [])
        #expect(restarted == ["changed", "rechunked"])
        // A changed file with nothing verified yet has nothing stale on disk: not a restart.
        var untouched = DownloadJournal(pack: "p", version: 1).adopting(v1).journal
        untouched.files["same"]?.verified = [1]
        #expect(untouched.adopting(v2).restarted.isEmpty)
        #expect(dropped == ["gone"])
        #expect(next.verifiedBytes(v2) == 10)
    }

    @Test func journalRoundTripsWithSortedChunkLists() throws {
        var journal = DownloadJournal(pack: "p", version: 3)
        journal.files["a"] = .init(DownloadManifest.File(path: "a", size: 30, sha256: "", etag: "\"x\"", url: "/a",
                                                         chunks: [.init(offset: 0, length: 10, sha256: "")]))
        journal.files["a"]?.verified = [2, 0, 1]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(journal), as: UTF8.self)
        #expect(text.contains("\"verified\":[0,1,2]"))
        #expect(try JSONDecoder().decode(DownloadJournal.self, from: Data(text.utf8)) == journal)
    }

    @Test func volumeFreeSpaceReadsTheNearestExistingDirectory() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let bytes = try VolumeFreeSpace().availableBytes(for: scratch.url.appendingPathComponent("not/yet/there"))
        #expect(bytes > 0)
    }
}
