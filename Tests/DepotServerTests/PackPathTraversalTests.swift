import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// spec §4.4 "Path safety" and http-decisions.md "Paths": the `{path}` of a file URL is resolved only against
/// the manifest; traversal, encoded separators, NUL, absolute paths and symlinks leaving the pack never reach
/// the file system. A malformed path is `400`, a path not in the manifest `404`, and neither carries file bytes.
@Suite struct PackPathTraversalTests {
    struct Row: Sendable, CustomTestStringConvertible {
        /// Appended to `/v1/packs/testpack/1/files/` as raw request-target bytes.
        let path: String
        let status: Int
        init(_ path: String, _ status: Int) { self.path = path; self.status = status }
        var testDescription: String { "files/\(path) → \(status)" }
    }

    static let rows: [Row] = [
        Row("../../../../etc/passwd", 400),
        Row("..", 400),
        Row("../manifest", 400),
        Row("levels/../range.bin", 400),
        Row("%2e%2e/%2e%2e/%2e%2e/etc/passwd", 400),
        Row("%2E%2E/", 400),
        Row("%2E%2E/1/files/range.bin", 400),
        Row(".%2e/.%2e/level2/1/stages.bin", 400),
        Row("%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400),
        Row("..%2f..%2fmanifest.json", 400),
        Row("levels%2findex.json", 400),            // an encoded slash never makes a new segment, even to an existing file
        Row("levels%2Findex.json", 400),
        Row("%2fetc%2fpasswd", 400),
        Row("levels%5cindex.json", 400),
        Row("..%5c..%5cetc%5cpasswd", 400),
        Row("levels\\index.json", 400),
        Row("..\\..\\etc\\passwd", 400),
        Row("range.bin%00", 400),
        Row("range.bin%00.txt", 400),
        Row("%00", 400),
        Row("%01range.bin", 400),
        Row("range%0a.bin", 400),
        Row("/etc/passwd", 400),                    // `files//etc/passwd`: an empty segment
        Row("//etc/passwd", 400),
        Row("levels//index.json", 400),
        Row("./range.bin", 400),
        Row(".", 400),
        Row("%2e", 400),
        Row("levels/./index.json", 400),
        Row("range.bin/", 400),
        Row("%C0%AE%C0%AE/etc/passwd", 400),        // overlong UTF-8 dots: not UTF-8 at all
        Row("%ZZ", 400),
        Row("%2", 400),
        Row("manifest.json", 404),                  // the manifest is not a file of the pack
        Row("..;/range.bin", 404),                  // just a strange name
        Row("...", 404),
        Row("levels", 404),                         // a directory
        Row("levels/", 400),
        Row("etc/passwd", 404),
    ]

    /// Bytes that must never come back from a traversal attempt: a system file and the pack's own secrets.
    static let forbiddenMarkers = ["root:", "\"files\"", "\"chunks\""]

    @Test(arguments: rows)
    func traversal(_ row: Row) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/files/" + row.path)
        #expect(response.status == row.status)
        #expect(response.text.contains("\"error\""))
        for marker in Self.forbiddenMarkers { #expect(!response.text.contains(marker)) }
        #expect(response.header("ETag") == nil)
    }

    /// Spec §7: a malformed request is a 400, then close, for a path that cannot be decoded too.
    @Test(arguments: ["/v1/packs/testpack/1/files/%ZZ", "/v1/packs/testpack/1/files/%2e%2e/x", "/a%2Fb", "/./products_v1.json"])
    func aMalformedPathClosesTheConnection(_ target: String) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request(target)
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
    }

    /// Percent-encoded names that are legitimate resolve to the file (the positive control of the table above).
    @Test(arguments: ["name%20with%20space%2B%C3%B1.dat", "name%20with%20space+%C3%B1.dat", "n%61me%20with%20space%2b%c3%b1.dat"])
    func encodedNamesResolve(_ path: String) async throws {
        let fixture = try await PackFixture.shared.value
        let response = try fixture.request("/v1/packs/testpack/1/files/" + path)
        #expect(response.status == 200)
        #expect(response.body == fixture.contents["name with space+ñ.dat"])
    }

    // MARK: - Symlinks

    static let secret = Array("TOP SECRET: bytes outside every pack. ".utf8) + PackFixture.bytes(200, seed: 77)

    /// A manifest entry for `path` describing `bytes`, as the publisher would write it.
    static func entry(pack: String, version: Int, path: String, bytes: [UInt8], chunkSize: Int64) -> PackManifest.File {
        let sha = Hex.encode(SHA256.hash(bytes))
        let chunks = PackManifest.chunkRanges(size: Int64(bytes.count), chunkSize: chunkSize).map {
            PackManifest.Chunk(offset: $0.offset, length: $0.length,
                               sha256: Hex.encode(SHA256.hash(bytes[Int($0.offset)..<Int($0.offset + $0.length)])))
        }
        return PackManifest.File(path: path, size: Int64(bytes.count), sha256: sha, etag: PackManifest.entityTag(forSHA256: sha),
                                 url: PackManifest.url(pack: pack, version: version, path: path), chunks: chunks)
    }

    static func writeManifest(_ files: [PackManifest.File], pack: String, version: Int, to directory: String) throws {
        let manifest = PackManifest(pack: pack, version: version, productId: nil, chunkSize: 4096,
                                    published: "2026-05-28T20:26:40Z", files: files)
        try Data(manifest.encoded()).write(to: URL(fileURLWithPath: directory + "/manifest.json"))
    }

    /// Symlinks inside a version directory pointing out of the pack, each with a hand-written manifest entry that
    /// matches the target's bytes exactly: 404, never the target's bytes. A symlinked version directory is not a version.
    @Test func symlinksLeavingThePackAreNotServed() async throws {
        try await TestDepot.with { depot in
            let fm = FileManager.default
            let root = depot.tree.path
            depot.tree.write("outside/secret.bin", Self.secret)
            depot.tree.write("content/evil/1/ok.bin", Array("fine".utf8))
            depot.tree.write("content/evil/1/real/x.bin", Array("real".utf8))
            let version = depot.contentDirectory + "/evil/1"
            try fm.createSymbolicLink(atPath: version + "/absolute.bin", withDestinationPath: root + "/outside/secret.bin")
            try fm.createSymbolicLink(atPath: version + "/relative.bin", withDestinationPath: "../../../outside/secret.bin")
            try fm.createSymbolicLink(atPath: version + "/dir", withDestinationPath: root + "/outside")
            try fm.createSymbolicLink(atPath: version + "/passwd", withDestinationPath: "/etc/passwd")
            let passwd = [UInt8](fm.contents(atPath: "/etc/passwd") ?? Data())
            try Self.writeManifest([
                Self.entry(pack: "evil", version: 1, path: "absolute.bin", bytes: Self.secret, chunkSize: 4096),
                Self.entry(pack: "evil", version: 1, path: "dir/secret.bin", bytes: Self.secret, chunkSize: 4096),
                Self.entry(pack: "evil", version: 1, path: "ok.bin", bytes: Array("fine".utf8), chunkSize: 4096),
                Self.entry(pack: "evil", version: 1, path: "passwd", bytes: passwd, chunkSize: 4096),
                Self.entry(pack: "evil", version: 1, path: "real/x.bin", bytes: Array("real".utf8), chunkSize: 4096),
                Self.entry(pack: "evil", version: 1, path: "relative.bin", bytes: Self.secret, chunkSize: 4096),
            ], pack: "evil", version: 1, to: version)
            depot.tree.write("content/evil/current", "1\n")
            // Version 2: a symlink to a complete, valid version directory outside the content tree.
            depot.tree.write("outside/v2/secret.bin", Self.secret)
            try Self.writeManifest([Self.entry(pack: "evil", version: 2, path: "secret.bin", bytes: Self.secret, chunkSize: 4096)],
                                   pack: "evil", version: 2, to: root + "/outside/v2")
            try fm.createSymbolicLink(atPath: depot.contentDirectory + "/evil/2", withDestinationPath: root + "/outside/v2")
            // Version 3: a real directory now, swapped for a symlink after loading.
            depot.tree.write("content/evil/3/v3.bin", Array("good".utf8))
            try Self.writeManifest([Self.entry(pack: "evil", version: 3, path: "v3.bin", bytes: Array("good".utf8), chunkSize: 4096)],
                                   pack: "evil", version: 3, to: depot.contentDirectory + "/evil/3")
            depot.app.reloadCatalog()

            let secret = try #require(depot.app.configuration.tokenSecret)
            let token = DownloadTokenAuthority(key: Array(secret.utf8)).issue(
                DownloadTokenClaims(pack: "evil", originalTransactionID: "t", account: nil, expires: Int64(Date().timeIntervalSince1970) + 600))
            func get(_ target: String) throws -> RawResponse { try depot.get(target, ["Authorization": "Bearer " + token]) }

            // The version loads: its regular files serve.
            #expect(try get("/v1/packs/evil/1/files/ok.bin").body == Array("fine".utf8))
            #expect(try get("/v1/packs/evil/1/files/real/x.bin").body == Array("real".utf8))
            for path in ["absolute.bin", "relative.bin", "dir/secret.bin", "passwd"] {
                for method in ["GET", "HEAD"] {
                    let response = try depot.get("/v1/packs/evil/1/files/" + path, ["Authorization": "Bearer " + token, "Range": "bytes=0-"],
                                                 method: method)
                    #expect(response.status == 404, "\(path)")
                    #expect(!response.text.contains("TOP SECRET"))
                    #expect(!response.text.contains("root:"))
                    #expect(response.header("ETag") == nil)
                }
            }
            let symlinkedVersion = try get("/v1/packs/evil/2/files/secret.bin")
            #expect(symlinkedVersion.status == 404)
            #expect(!symlinkedVersion.text.contains("TOP SECRET"))
            #expect(try get("/v1/packs/evil/2/manifest").status == 404)

            // Files swapped for symlinks after the version was loaded: still never the outside bytes.
            depot.tree.write("outside/fine.bin", Array("ZQZQ".utf8))   // same size as ok.bin
            try fm.removeItem(atPath: version + "/ok.bin")
            try fm.createSymbolicLink(atPath: version + "/ok.bin", withDestinationPath: root + "/outside/fine.bin")
            depot.tree.write("outside/swapped/x.bin", Array("ZQZQ".utf8))  // same size as real/x.bin
            try fm.removeItem(atPath: version + "/real")
            try fm.createSymbolicLink(atPath: version + "/real", withDestinationPath: root + "/outside/swapped")
            #expect(try get("/v1/packs/evil/3/files/v3.bin").body == Array("good".utf8))
            try fm.moveItem(atPath: depot.contentDirectory + "/evil/3", toPath: root + "/outside/v3")
            depot.tree.write("outside/v3/v3.bin", Array("ZQZQ".utf8))
            try fm.createSymbolicLink(atPath: depot.contentDirectory + "/evil/3", withDestinationPath: root + "/outside/v3")
            for target in ["/v1/packs/evil/1/files/ok.bin", "/v1/packs/evil/1/files/real/x.bin", "/v1/packs/evil/3/files/v3.bin"] {
                let response = try get(target)
                #expect(response.status == 404, "\(target)")
                #expect(!response.text.contains("ZQZQ"))
            }
        }
    }
}
