import DepotWire
import Foundation
import Testing
import DepotCore

/// `pack-updates.md` §2: the delta is computed from two manifests (an index by SHA-256 and length); the plan with
/// `from` counts only chunks to fetch, and `fits` needs room for the copies too.
@Suite struct PackDeltaTests {
    static func file(_ path: String, _ chunks: [(Int64, String)], version: Int = 2) -> PackManifest.File {
        var offset: Int64 = 0
        let list = chunks.map { length, hash -> PackManifest.Chunk in
            defer { offset += length }
            return PackManifest.Chunk(offset: offset, length: length, sha256: String(repeating: hash, count: 64))
        }
        return PackManifest.File(path: path, size: offset, sha256: String(repeating: "f", count: 64), etag: "\"x\"",
                                 url: PackManifest.url(pack: "p", version: version, path: path), chunks: list)
    }

    static let old = PackManifest(pack: "p", version: 1, productId: nil, chunkSize: 100, published: "2026-01-01T00:00:00Z", files: [
        file("a", [(100, "1"), (50, "2")], version: 1), file("b", [(80, "3")], version: 1),
    ])
    static let new = PackManifest(pack: "p", version: 2, productId: nil, chunkSize: 100, published: "2026-01-02T00:00:00Z", files: [
        // "a" keeps chunk 1, "2" reappears under another length (not the same bytes), "3" moved from b to c.
        file("a", [(100, "1"), (60, "2"), (40, "4")]), file("c", [(80, "3"), (100, "1")]),
    ])

    @Test func chunksFoundInTheOldVersionAreMarkedReuse() throws {
        let delta = Self.new.delta(from: Self.old, fromVersion: 1)
        let reuse = delta.files.flatMap { $0.chunks.map(\.reuse) }
        #expect(reuse == [.init(path: "a", offset: 0), nil, nil, .init(path: "b", offset: 0), .init(path: "a", offset: 0)])
        #expect(delta.delta == .summary(.init(from: 1, reuseBytes: 280, fetchBytes: 100)))
        // The wire form: `reuse` on the chunk, `delta` on the manifest.
        let text = String(decoding: try WireJSON.encode(delta), as: UTF8.self)
        #expect(text.contains("\"reuse\": {\"path\": \"a\", \"offset\": 0}"))
        #expect(text.contains("\"delta\": {\"from\": 1, \"reuseBytes\": 280, \"fetchBytes\": 100}"))
        #expect(try WireJSON.decode(PackManifest.self, from: Array(text.utf8)) == delta)
    }

    @Test func aMissingOldVersionIsDeltaNull() throws {
        let delta = Self.new.delta(from: nil, fromVersion: 9)
        #expect(delta.delta == .unavailable)
        #expect(delta.files.allSatisfy { $0.chunks.allSatisfy { $0.reuse == nil } })
        let text = String(decoding: try WireJSON.encode(delta), as: UTF8.self)
        #expect(text.contains("\"delta\": null"))
        #expect(try WireJSON.decode(PackManifest.self, from: Array(text.utf8)).delta == .unavailable)
        // Without `from` there is no `delta` key at all.
        #expect(!String(decoding: try WireJSON.encode(Self.new), as: UTF8.self).contains("delta"))
    }

    @Test func fromItselfReusesEverything() {
        let delta = Self.new.delta(from: Self.new, fromVersion: 2)
        #expect(delta.delta == .summary(.init(from: 2, reuseBytes: Self.new.downloadBytes, fetchBytes: 0)))
    }

    @Test(arguments: ["", "0", "x", "1.5", "+1", "-1", "01", " 1", "1 "])
    func fromSyntaxIsStrict(_ text: String) {
        #expect(PackManifest.parseFromVersion(text) == nil)
    }

    @Test func fromAcceptsPositiveIntegers() {
        #expect(PackManifest.parseFromVersion("1") == 1)
        #expect(PackManifest.parseFromVersion("42") == 42)
        #expect(PackManifest.parseFromVersion("99999999999999999999999") == Int.max)
    }

    @Test func thePlanCountsOnlyChunksToFetchAndRoomForCopies() throws {
        let delta = Self.new.delta(from: Self.old, fromVersion: 1)
        let reserve: Int64 = 16 << 20
        // Room for the 100 bytes to fetch but not for the 280 to copy beside them: nothing fits as a whole.
        let tight = try ChunkPlan.make(manifest: delta, available: reserve + 150, have: 0)
        #expect(tight.remainingBytes == 100)
        #expect(tight.next.map(\.length) == [60, 40])
        #expect(tight.fits == false)
        let roomy = try ChunkPlan.make(manifest: delta, available: reserve + 380, have: 0)
        #expect(roomy.fits == true)
        // After `have` (the first file), only c's chunks remain, both to copy.
        let later = try ChunkPlan.make(manifest: delta, available: reserve, have: 200)
        #expect(later.remainingBytes == 0 && later.next.isEmpty && later.fits == false)
    }
}
