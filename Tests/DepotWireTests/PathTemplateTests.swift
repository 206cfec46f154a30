import DepotWire
import Testing

/// `PathTemplate`: parsing patterns, building percent-encoded paths, matching decoded segments.
@Suite struct PathTemplateTests {
    @Test func everyPublicTemplateIsWellFormed() {
        for template in WirePath.all {
            #expect(template.problem == nil, "\(template)")
        }
    }

    struct BadPattern: Sendable, CustomTestStringConvertible {
        let pattern: String
        var testDescription: String { pattern }
    }

    @Test(arguments: ["v1/x", "/a/{b", "/a/{}", "/a/x{b}", "/a/{b+}/c", "/a/{b}/{b}", "/a/{b c}"])
    func malformedPatternsAreRecorded(_ pattern: String) {
        #expect(PathTemplate(pattern).problem != nil)
    }

    @Test func buildsPercentEncodedPaths() {
        #expect(WirePath.packManifest(pack: "level2") == "/v1/packs/level2/manifest")
        #expect(WirePath.versionManifest(pack: "level2", version: 3) == "/v1/packs/level2/3/manifest")
        #expect(WirePath.packFile(pack: "level2", version: 3, path: "stages/a b+ñ.bin")
            == "/v1/packs/level2/3/files/stages/a%20b%2B%C3%B1.bin")
        #expect(WirePath.packFile(pack: "p", version: 1, path: "a?b#c%d") == "/v1/packs/p/1/files/a%3Fb%23c%25d")
        #expect(WirePath.adminPackFile(pack: "p", version: 2, path: "x/y.bin") == "/admin/v1/packs/p/2/files/x/y.bin")
        #expect(WirePath.adminPublish(pack: "p", version: 2) == "/admin/v1/packs/p/2/publish")
        #expect(WirePath.productsV1.path([:]) == "/products_v1.json")
        // A pack ID is a segment too: nothing in it can add one.
        #expect(WirePath.packManifest(pack: "a/b") == "/v1/packs/a%2Fb/manifest")
    }

    @Test func matchesDecodedSegments() throws {
        let file = try #require(WirePath.packFile.match(["v1", "packs", "level2", "3", "files", "stages", "a b.bin"]))
        #expect(file["pack"] == "level2")
        #expect(file["version"] == "3")
        #expect(file["path"] == "stages/a b.bin")
        #expect(file["missing"] == nil)
        // `{path*}`: a file URL without a path still has the file shape (the server calls it malformed).
        #expect(WirePath.packFile.match(["v1", "packs", "p", "1", "files"])?["path"] == "")
        #expect(WirePath.adminPackFile.match(["admin", "v1", "packs", "p", "1", "files"]) == nil)
        #expect(WirePath.adminPackFile.match(["admin", "v1", "packs", "p", "1", "files", ""])?["path"] == "")
        #expect(WirePath.health.match(["healthz"]) != nil)
        #expect(WirePath.health.match(["healthz", ""]) == nil)
        #expect(WirePath.health.match(["healthz", "x"]) == nil)
        #expect(WirePath.packManifest.match(["v1", "packs", "p", "1", "manifest"]) == nil)
        #expect(WirePath.packsArea.match(["v1", "packs"]) == nil)
        #expect(WirePath.packsArea.match(["v1", "packs", ""])?["rest"] == "")
        #expect(WirePath.adminArea.match(["admin"])?["rest"] == "")
        #expect(WirePath.adminArea.match(["administrator"]) == nil)
    }

    /// What a builder writes, the parser reads back: the client and the server agree on every path.
    @Test(arguments: ["a.bin", "dir/sub/file name.txt", "ü/ß?#%.dat", "+plus+/~tilde"])
    func buildThenParseRoundTrips(_ path: String) throws {
        let built = WirePath.packFile(pack: "level2", version: 12, path: path)
        let parsed = try #require(WirePath.packFile.match(path: built))
        #expect(parsed["pack"] == "level2")
        #expect(parsed["version"] == "12")
        #expect(parsed["path"] == path)
        #expect(WirePath.packFile.match(path: built + "?token=x&available=1")?["path"] == path)
    }

    @Test func rawPathsThatCannotBeDecodedDoNotMatch() {
        #expect(WirePath.packFile.match(path: "/v1/packs/p/1/files/%ZZ") == nil)
        #expect(WirePath.packFile.match(path: "/v1/packs/p/1/files/%C0%AE") == nil)
        #expect(WirePath.packFile.match(path: "v1/packs/p/1/files/a") == nil)
    }

    @Test func moreSpecificTemplatesSortFirst() {
        let literal = PathTemplate("/v1/packs/{pack}/manifest")
        let deeper = PathTemplate("/v1/packs/{pack}/{version}/manifest")
        let rest = PathTemplate("/v1/packs/{rest+}")
        #expect(PathTemplate.moreSpecific(literal, than: deeper))
        #expect(PathTemplate.moreSpecific(deeper, than: rest))
        #expect(PathTemplate.moreSpecific(literal, than: rest))
        #expect(!PathTemplate.moreSpecific(rest, than: literal))
        #expect(PathTemplate("/a/{x}").hasSameShape(as: PathTemplate("/a/{y}")))
        #expect(!PathTemplate("/a/{x}").hasSameShape(as: PathTemplate("/b/{x}")))
    }
}
