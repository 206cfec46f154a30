import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// spec §5 `depot check`: a manifest that does not match its files is reported with file and field.
@Suite struct PackContentCheckTests {
    /// A catalog and content tree with one published pack, `chk` version 1 (chunk size 4096):
    /// `a.bin` (10 000 bytes, 3 chunks), `b.bin`, `sub/c.bin`.
    static func tree() throws -> (TemporaryDirectory, DepotPaths) {
        let tree = TemporaryDirectory("check")
        tree.write("catalog/products.json", "{\"products\": []}\n")
        try FileManager.default.createDirectory(atPath: tree.path + "/content", withIntermediateDirectories: true)
        tree.write("source/a.bin", PackFixture.bytes(10_000, seed: 21))
        tree.write("source/b.bin", PackFixture.bytes(100, seed: 22))
        tree.write("source/sub/c.bin", PackFixture.bytes(50, seed: 23))
        let paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content",
                               dataDirectory: tree.path + "/var")
        _ = try Publisher(paths: paths, now: { PackFixture.publishTime }).publish(PublishRequest(
            pack: "chk", productID: "com.example.depot.chk", type: .nonConsumable, title: "Check", chunkSize: 4096,
            sources: [tree.path + "/source"]))
        return (tree, paths)
    }

    static func editManifest(_ tree: TemporaryDirectory, _ edit: (inout PackManifest) -> Void) throws {
        var manifest = try PackManifest.decode(try #require(tree.read("content/chk/1/manifest.json")), file: "m")
        edit(&manifest)
        tree.write("content/chk/1/manifest.json", try manifest.encoded())
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        /// The problem expected: its file ends with this, and its field is this.
        let fileSuffix: String
        let field: String
        let damage: @Sendable (TemporaryDirectory) throws -> Void
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "file longer than the manifest says", fileSuffix: "chk/1/manifest.json", field: "files[0].size") { tree in
            tree.write("content/chk/1/a.bin", try #require(tree.read("content/chk/1/a.bin")) + [0])
        },
        Row(name: "file shorter than the manifest says", fileSuffix: "chk/1/manifest.json", field: "files[1].size") { tree in
            tree.write("content/chk/1/b.bin", Array(try #require(tree.read("content/chk/1/b.bin")).dropLast()))
        },
        Row(name: "one byte changed", fileSuffix: "chk/1/manifest.json", field: "files[0].sha256") { tree in
            var bytes = try #require(tree.read("content/chk/1/a.bin"))
            bytes[5000] ^= 0x01
            tree.write("content/chk/1/a.bin", bytes)
        },
        Row(name: "file hash in the manifest wrong", fileSuffix: "chk/1/manifest.json", field: "files[2].sha256") { tree in
            try editManifest(tree) {
                $0.files[2].sha256 = String(repeating: "0", count: 64)
                $0.files[2].etag = PackManifest.entityTag(forSHA256: $0.files[2].sha256)
            }
        },
        Row(name: "chunk hash in the manifest wrong", fileSuffix: "chk/1/manifest.json", field: "files[0].chunks[2].sha256") { tree in
            try editManifest(tree) { $0.files[0].chunks[2].sha256 = String(repeating: "f", count: 64) }
        },
        Row(name: "chunks do not tile the file", fileSuffix: "chk/1/manifest.json", field: "files[0].chunks") { tree in
            try editManifest(tree) { $0.files[0].chunks.removeLast() }
        },
        Row(name: "listed file missing", fileSuffix: "chk/1/b.bin", field: "") { tree in
            try FileManager.default.removeItem(atPath: tree.path + "/content/chk/1/b.bin")
        },
        Row(name: "listed file is a symlink", fileSuffix: "chk/1/sub/c.bin", field: "") { tree in
            let path = tree.path + "/content/chk/1/sub/c.bin"
            tree.write("elsewhere/c.bin", try #require(tree.read("content/chk/1/sub/c.bin")))
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: tree.path + "/elsewhere/c.bin")
        },
        Row(name: "extra file", fileSuffix: "chk/1/extra.bin", field: "") { tree in
            tree.write("content/chk/1/extra.bin", [1, 2, 3])
        },
        Row(name: "extra nested file", fileSuffix: "chk/1/sub/deeper/d.bin", field: "") { tree in
            tree.write("content/chk/1/sub/deeper/d.bin", [1])
        },
        Row(name: "manifest missing", fileSuffix: "chk/1/manifest.json", field: "") { tree in
            try FileManager.default.removeItem(atPath: tree.path + "/content/chk/1/manifest.json")
        },
        Row(name: "manifest not JSON", fileSuffix: "chk/1/manifest.json", field: "") { tree in
            tree.write("content/chk/1/manifest.json", "{\"pack\": ")
        },
        Row(name: "current names a missing version", fileSuffix: "chk/current", field: "") { tree in
            tree.write("content/chk/current", "7\n")
        },
    ]

    @Test func cleanTreeHasNoProblems() throws {
        let (tree, paths) = try Self.tree()
        let summary = DepotCheck.run(paths: paths)
        #expect(summary.problems.isEmpty, "\(summary.problems)")
        #expect(summary.files == 3)
        #expect(summary.bytes == 10_150)
        _ = tree
    }

    @Test(arguments: rows)
    func mismatchIsReported(_ row: Row) throws {
        let (tree, paths) = try Self.tree()
        try row.damage(tree)
        let summary = DepotCheck.run(paths: paths)
        #expect(summary.problems.contains { $0.file.hasSuffix(row.fileSuffix) && $0.field == row.field },
                "\(summary.problems.map(\.description))")
    }

    /// The server trusts the manifest but never sends a body whose length contradicts it: a file that changed size
    /// on disk is a 500, not a truncated or overlong download under the manifest's ETag.
    @Test(arguments: [-1, 1])
    func servedFileWhoseSizeChanged(_ delta: Int) async throws {
        try await PackFixture.with { fixture in
            var bytes = try #require(fixture.contents["range.bin"])
            if delta < 0 { bytes.removeLast() } else { bytes.append(0) }
            fixture.depot.tree.write("content/testpack/1/range.bin", bytes)
            for headers in [[:], ["Range": "bytes=0-9"]] as [[String: String]] {
                let response = try fixture.request(fixture.fileURL("range.bin"), headers)
                #expect(response.status == 500)
                #expect(response.text.contains("content_corrupt"))
                #expect(response.header("ETag") == nil)
            }
        }
    }

    /// `depot check` prints each problem and exits 1; a clean tree exits 0.
    @Test func commandLine() async throws {
        let (tree, paths) = try Self.tree()
        let clean = try await ProcessRunner.run(ProcessRunner.depotExecutable, ["check", "--catalog", paths.catalogDirectory,
                                                                          "--content", paths.contentDirectory])
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
        var bytes = try #require(tree.read("content/chk/1/a.bin"))
        bytes[0] ^= 0xFF
        tree.write("content/chk/1/a.bin", bytes)
        tree.write("content/chk/1/extra.bin", [1])
        let broken = try await ProcessRunner.run(ProcessRunner.depotExecutable, ["check", "--catalog", paths.catalogDirectory,
                                                                           "--content", paths.contentDirectory])
        #expect(broken.status == 1)
        #expect(broken.stdout.contains("files[0].sha256"))
        #expect(broken.stdout.contains("extra.bin"))
    }
}
