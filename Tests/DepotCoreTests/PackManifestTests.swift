import DepotWire
import Foundation
import Testing
import DepotCore

/// spec §2.2, §4.4: chunk tiling, URLs, the stored JSON form and the manifest's own consistency rules.
@Suite struct PackManifestTests {
    struct TilingRow: Sendable, CustomTestStringConvertible {
        let size: Int64
        let chunkSize: Int64
        let chunks: [Int64]   // offsets are the running sum
        var testDescription: String { "\(size) bytes in chunks of \(chunkSize) → \(chunks)" }
    }

    // An empty file has no chunks; the last chunk may be shorter.
    static let tilingRows: [TilingRow] = [
        TilingRow(size: 0, chunkSize: 4096, chunks: []),
        TilingRow(size: 1, chunkSize: 4096, chunks: [1]),
        TilingRow(size: 4095, chunkSize: 4096, chunks: [4095]),
        TilingRow(size: 4096, chunkSize: 4096, chunks: [4096]),
        TilingRow(size: 4097, chunkSize: 4096, chunks: [4096, 1]),
        TilingRow(size: 14336, chunkSize: 4096, chunks: [4096, 4096, 4096, 2048]),
        TilingRow(size: 5 << 20, chunkSize: 1 << 20, chunks: [1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20]),
    ]

    @Test(arguments: tilingRows)
    func chunkTiling(_ row: TilingRow) {
        let ranges = PackManifest.chunkRanges(size: row.size, chunkSize: row.chunkSize)
        #expect(ranges.map(\.length) == row.chunks)
        var offset: Int64 = 0
        for range in ranges {
            #expect(range.offset == offset)
            offset += range.length
        }
        #expect(offset == row.size)
    }

    struct URLRow: Sendable, CustomTestStringConvertible {
        let path: String
        let url: String
        var testDescription: String { "\(path.debugDescription) → \(url)" }
    }

    static let urlRows: [URLRow] = [
        URLRow(path: "stages.bin", url: "/v1/packs/level2/3/files/stages.bin"),
        URLRow(path: "stages/index.json", url: "/v1/packs/level2/3/files/stages/index.json"),
        URLRow(path: "a b+c.bin", url: "/v1/packs/level2/3/files/a%20b%2Bc.bin"),
        URLRow(path: "ñ/é.txt", url: "/v1/packs/level2/3/files/%C3%B1/%C3%A9.txt"),
        URLRow(path: "q?x#y%.bin", url: "/v1/packs/level2/3/files/q%3Fx%23y%25.bin"),
        URLRow(path: "a..b/~x_y-z.bin", url: "/v1/packs/level2/3/files/a..b/~x_y-z.bin"),
    ]

    @Test(arguments: urlRows)
    func fileURL(_ row: URLRow) {
        #expect(PackManifest.url(pack: "level2", version: 3, path: row.path) == row.url)
    }

    static func sample() -> PackManifest {
        let files = [
            PackManifest.File(path: "a.bin", size: 5000, sha256: String(repeating: "a", count: 64),
                              etag: PackManifest.entityTag(forSHA256: String(repeating: "a", count: 64)),
                              url: PackManifest.url(pack: "level2", version: 3, path: "a.bin"),
                              chunks: [PackManifest.Chunk(offset: 0, length: 4096, sha256: String(repeating: "1", count: 64)),
                                       PackManifest.Chunk(offset: 4096, length: 904, sha256: String(repeating: "2", count: 64))]),
            PackManifest.File(path: "dir/empty.bin", size: 0, sha256: String(repeating: "e", count: 64),
                              etag: PackManifest.entityTag(forSHA256: String(repeating: "e", count: 64)),
                              url: PackManifest.url(pack: "level2", version: 3, path: "dir/empty.bin"), chunks: []),
        ]
        return PackManifest(pack: "level2", version: 3, productId: "com.example.depot.level2", chunkSize: 4096,
                            published: "2026-05-01T12:00:00Z", files: files)
    }

    @Test func downloadBytesIsTheSumOfSizes() {
        #expect(Self.sample().downloadBytes == 5000)
    }

    @Test func encodeDecodeRoundTrip() throws {
        let manifest = Self.sample()
        let decoded = try PackManifest.decode(manifest.encoded(), file: "m.json")
        #expect(decoded == manifest)
        #expect(try decoded.encoded() == manifest.encoded())
    }

    /// The stored form carries the fields of spec §4.4 with the spec's names and JSON types.
    @Test func encodedShape() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(Self.sample().encoded())) as? [String: Any])
        #expect(Set(object.keys).isSuperset(of: ["pack", "version", "productId", "downloadBytes", "chunkSize", "files"]))
        #expect(object["pack"] as? String == "level2")
        #expect((object["version"] as? NSNumber)?.intValue == 3)
        #expect(object["productId"] as? String == "com.example.depot.level2")
        #expect((object["downloadBytes"] as? NSNumber)?.int64Value == 5000)
        #expect((object["chunkSize"] as? NSNumber)?.int64Value == 4096)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == 2)
        for file in files {
            #expect(Set(file.keys) == ["path", "size", "sha256", "etag", "url", "chunks"])
        }
        #expect(files[0]["etag"] as? String == "\"" + String(repeating: "a", count: 64) + "\"")
        let chunks = try #require(files[0]["chunks"] as? [[String: Any]])
        #expect(chunks.count == 2)
        for chunk in chunks { #expect(Set(chunk.keys) == ["offset", "length", "sha256"]) }
        #expect((files[1]["chunks"] as? [Any])?.isEmpty == true)
    }

    @Test func consistentManifestHasNoProblems() {
        #expect(Self.sample().consistencyProblems(file: "m.json", expectedPack: "level2", expectedVersion: 3).isEmpty)
    }

    struct DamageRow: Sendable, CustomTestStringConvertible {
        let name: String
        let field: String
        let damage: @Sendable (inout PackManifest) -> Void
        var testDescription: String { name }
    }

    static let damageRows: [DamageRow] = [
        DamageRow(name: "pack differs from directory", field: "pack") { $0.pack = "other" },
        DamageRow(name: "version differs from directory", field: "version") { $0.version = 4 },
        DamageRow(name: "chunk size zero", field: "chunkSize") { $0.chunkSize = 0 },
        DamageRow(name: "bad publish time", field: "published") { $0.published = "yesterday" },
        DamageRow(name: "traversal path", field: "files[0].path") { $0.files[0].path = "../a.bin"; $0.files[0].url = PackManifest.url(pack: "level2", version: 3, path: "../a.bin") },
        DamageRow(name: "absolute path", field: "files[0].path") { $0.files[0].path = "/a.bin" },
        DamageRow(name: "backslash path", field: "files[0].path") { $0.files[0].path = "a\\b.bin" },
        DamageRow(name: "NUL in path", field: "files[0].path") { $0.files[0].path = "a\u{0}.bin" },
        DamageRow(name: "manifest lists itself", field: "files[1].path") { $0.files[1].path = "manifest.json"; $0.files[1].url = PackManifest.url(pack: "level2", version: 3, path: "manifest.json") },
        DamageRow(name: "path listed twice", field: "files[1].path") { $0.files[1].path = "a.bin"; $0.files[1].url = $0.files[0].url },
        DamageRow(name: "negative size", field: "files[1].size") { $0.files[1].size = -1; $0.downloadBytes = 4999 },
        DamageRow(name: "etag not from sha256", field: "files[0].etag") { $0.files[0].etag = "\"abc\"" },
        DamageRow(name: "weak etag", field: "files[0].etag") { $0.files[0].etag = "W/" + $0.files[0].etag },
        DamageRow(name: "url for another path", field: "files[0].url") { $0.files[0].url = "/v1/packs/level2/3/files/b.bin" },
        DamageRow(name: "chunk missing", field: "files[0].chunks") { $0.files[0].chunks.removeLast() },
        DamageRow(name: "chunk with wrong length", field: "files[0].chunks") { $0.files[0].chunks[1].length = 903 },
        DamageRow(name: "chunk with wrong offset", field: "files[0].chunks") { $0.files[0].chunks[1].offset = 4095 },
        DamageRow(name: "empty file with a chunk", field: "files[1].chunks") { $0.files[1].chunks = [PackManifest.Chunk(offset: 0, length: 0, sha256: "")] },
        DamageRow(name: "size changed, chunks not", field: "files[0].chunks") { $0.files[0].size = 5001; $0.downloadBytes = 5001 },
        DamageRow(name: "downloadBytes off", field: "downloadBytes") { $0.downloadBytes += 1 },
    ]

    @Test(arguments: damageRows)
    func inconsistencyIsReported(_ row: DamageRow) {
        var manifest = Self.sample()
        row.damage(&manifest)
        let problems = manifest.consistencyProblems(file: "m.json", expectedPack: "level2", expectedVersion: 3)
        #expect(problems.contains { $0.field == row.field && $0.file == "m.json" }, "\(problems)")
    }

    struct DecodeRow: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let message: String
        var testDescription: String { name }
    }

    static let decodeRows: [DecodeRow] = [
        DecodeRow(name: "not JSON", text: "{", message: "not JSON"),
        DecodeRow(name: "missing files", text: #"{"pack":"p","version":1,"productId":null,"downloadBytes":0,"chunkSize":4096,"published":"2026-01-01T00:00:00Z"}"#, message: "missing files"),
        DecodeRow(name: "size is a string", text: #"{"pack":"p","version":1,"productId":null,"downloadBytes":0,"chunkSize":4096,"published":"2026-01-01T00:00:00Z","files":[{"path":"a","size":"1","sha256":"","etag":"","url":"","chunks":[]}]}"#, message: "wrong type at files[0].size"),
    ]

    @Test(arguments: decodeRows)
    func undecodable(_ row: DecodeRow) {
        do {
            _ = try PackManifest.decode(Array(row.text.utf8), file: "x/manifest.json")
            Issue.record("decoded \(row.name)")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems.first?.file == "x/manifest.json")
            #expect(error.problems.first?.message.contains(row.message) == true, "\(error)")
        }
    }

    struct PathRow: Sendable, CustomTestStringConvertible {
        let path: String
        let safe: Bool
        var testDescription: String { "\(path.debugDescription) safe=\(safe)" }
    }

    static let pathRows: [PathRow] = [
        PathRow(path: "a.bin", safe: true),
        PathRow(path: "dir/sub/a.bin", safe: true),
        PathRow(path: "a..b", safe: true),
        PathRow(path: "..a", safe: true),
        PathRow(path: "ñ space+plus", safe: true),
        PathRow(path: "", safe: false),
        PathRow(path: "/etc/passwd", safe: false),
        PathRow(path: "..", safe: false),
        PathRow(path: "../a", safe: false),
        PathRow(path: "a/../b", safe: false),
        PathRow(path: "a/..", safe: false),
        PathRow(path: ".", safe: false),
        PathRow(path: "./a", safe: false),
        PathRow(path: "a//b", safe: false),
        PathRow(path: "a/", safe: false),
        PathRow(path: "a\\b", safe: false),
        PathRow(path: "..\\a", safe: false),
        PathRow(path: "a\u{0}b", safe: false),
        PathRow(path: "a\nb", safe: false),
        PathRow(path: "a\u{7F}b", safe: false),
        PathRow(path: String(repeating: "x", count: 256), safe: false),
        PathRow(path: String(repeating: "x/", count: 600) + "x", safe: false),
    ]

    @Test(arguments: pathRows)
    func safeRelativePath(_ row: PathRow) {
        #expect(Identifiers.isSafeRelativePath(row.path) == row.safe)
    }
}
