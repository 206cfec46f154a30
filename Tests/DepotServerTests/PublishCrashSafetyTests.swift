import DepotCore
import DepotWire
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Issue 5: `depot publish` killed with SIGKILL at every durable file operation leaves either the old state or
/// the new one, never a half-published version, and `depot check` passes after every kill.
@Suite("Publish crash safety")
struct PublishCrashSafetyTests {
    /// Files for a new version of level2: nested paths, several chunks at a small chunk size.
    static func makeSource(in tree: TemporaryDirectory) -> String {
        var generator = SystemRandomNumberGenerator()
        for (name, size) in [("stages.bin", 150_000), ("art/cover.bin", 40_000), ("art/tiles/a.bin", 9_000), ("README.txt", 120)] {
            tree.write("source/" + name, (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        return tree.path + "/source"
    }

    @Test func killedAtEveryStepLeavesOldOrNewState() async throws {
        let template = TemporaryDirectory("crash-template")
        try await TestDepot.copySample(into: template.path)
        let source = Self.makeSource(in: template)
        let oldCatalog = template.read("catalog/products.json")!
        let oldManifest = template.read("content/level2/1/manifest.json")!
        var sawOld = false
        var sawNew = false
        var step = 1
        while step < 40 {
            let tree = TemporaryDirectory("crash")
            let copy = try await ProcessRunner.run("/bin/cp", ["-a", template.path + "/catalog", template.path + "/content", tree.path])
            #expect(copy.status == 0)
            // The real publish command, killed by SIGKILL after the step-th durable file operation.
            let result = try await ProcessRunner.run(ProcessRunner.testPublisherExecutable, [
                "--crash-at", String(step), "--", "--pack", "level2", "--product", "com.example.depot.level2", "--type", "non-consumable",
                "--title", "Level 2: Glacier", "--chunk-size", "4096",
                "--catalog", tree.path + "/catalog", "--content", tree.path + "/content", source + "/stages.bin", source + "/art",
                source + "/README.txt",
            ])
            let finished = result.status == 0
            if !finished {
                // Killed by SIGKILL at the step (Foundation reports the signal number as the status).
                #expect(result.status == 9, "step \(step): \(result.stderr)")
            }
            // depot check passes on whatever was left.
            let paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content", dataDirectory: "")
            let summary = DepotCheck.run(paths: paths)
            #expect(summary.problems.isEmpty, "step \(step): \(summary.problems.map(\.description))")

            // A server on the tree serves the old pack version or the complete new one.
            let snapshot = try #require(try? SnapshotLoader.load(paths: paths, cacheControl: "no-cache", manifestCache: ManifestCache()).get(),
                                        "step \(step): the tree does not load")
            let live = try #require(snapshot.content.packs["level2"]?.live)
            if live.version == 1 {
                sawOld = true
                #expect(tree.read("content/level2/1/manifest.json") == oldManifest)
                #expect(tree.read("catalog/products.json") == oldCatalog || finished)
            } else {
                sawNew = true
                #expect(live.version == 2)
                // A directory argument contributes its contents.
                #expect(Set(live.manifest.files.map(\.path)) == ["stages.bin", "cover.bin", "tiles/a.bin", "README.txt"])
                #expect(live.files.count == 4, "every file of the live version is on disk")
                let v2 = String(decoding: snapshot.v2.identity.body, as: UTF8.self)
                #expect(v2.contains("\"id\": \"level2\", \"version\": 2"))
            }
            // Versions that are on disk are complete: a manifest and every file it lists.
            for version in snapshot.content.packs["level2"]!.versions.values {
                #expect(version.files.count == version.manifest.files.count)
            }
            if finished { break }
            step += 1
        }
        #expect(sawOld && sawNew)
        #expect(step > 8, "the publish has at least 8 durable steps to crash at")
    }

    @Test func aCrashedPublishLeavesStagingThatTheNextPublishCleans() async throws {
        let tree = TemporaryDirectory("crash-staging")
        try await TestDepot.copySample(into: tree.path)
        let source = Self.makeSource(in: tree)
        let arguments = ["--pack", "level2", "--product", "com.example.depot.level2", "--type", "non-consumable",
                         "--title", "Level 2: Glacier", "--catalog", tree.path + "/catalog", "--content", tree.path + "/content", source]
        let crashed = try await ProcessRunner.run(ProcessRunner.testPublisherExecutable, ["--crash-at", "2", "--"] + arguments)
        #expect(crashed.status == 9)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: tree.path + "/content/.staging").filter { $0.hasPrefix("publish-") }
        #expect(leftovers.count == 1)
        let done = try await ProcessRunner.run(ProcessRunner.depotExecutable, ["publish"] + arguments)
        #expect(done.status == 0, "\(done.stderr)")
        let after = try FileManager.default.contentsOfDirectory(atPath: tree.path + "/content/.staging").filter { $0.hasPrefix("publish-") }
        #expect(after.isEmpty)
        #expect(String(decoding: tree.read("content/level2/current")!, as: UTF8.self) == "2\n")
    }
}
