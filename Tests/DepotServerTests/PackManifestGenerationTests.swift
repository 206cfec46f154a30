import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// spec §2.2, §4.4: what `FileDigest` and the publisher write into a manifest — sizes, chunk tiling,
/// SHA-256 per file and per chunk — checked against independent computations (`sha256sum`, and
/// SHA-256 over slices cut out here).
@Suite struct PackManifestGenerationTests {
    struct SizeRow: Sendable, CustomTestStringConvertible {
        let size: Int
        let chunkSize: Int
        var testDescription: String { "\(size) bytes, chunks of \(chunkSize)" }
    }

    static let sizeRows: [SizeRow] = [
        SizeRow(size: 0, chunkSize: 4096),
        SizeRow(size: 1, chunkSize: 4096),
        SizeRow(size: 4095, chunkSize: 4096),
        SizeRow(size: 4096, chunkSize: 4096),
        SizeRow(size: 4097, chunkSize: 4096),
        SizeRow(size: 14336, chunkSize: 4096),                  // 3.5 chunks
        SizeRow(size: 10_000, chunkSize: 1025),                 // odd chunk size
        SizeRow(size: (4 << 20) + 3, chunkSize: 3 << 19),       // 1.5 MiB chunks straddle the 1 MiB read blocks
        SizeRow(size: (5 << 20) + 7, chunkSize: 2 << 20),       // chunks larger than a read block
    ]

    /// `sha256sum` over files: the independent whole-file digest (the child waited for off the cooperative pool).
    static func sha256sum(_ paths: [String]) async throws -> [String] {
        let result = try await ProcessRunner.run("/usr/bin/sha256sum", paths)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map { String($0.prefix(64)) }
    }

    /// The chunks a file of `size` must have, computed here: offsets i·chunk, the last one shorter, hashes of the slices.
    static func expectedChunks(_ bytes: [UInt8], chunkSize: Int) -> [PackManifest.Chunk] {
        stride(from: 0, to: bytes.count, by: chunkSize).map { offset in
            let end = min(offset + chunkSize, bytes.count)
            return PackManifest.Chunk(offset: Int64(offset), length: Int64(end - offset),
                                      sha256: Hex.encode(SHA256.hash(bytes[offset..<end])))
        }
    }

    @Test(arguments: sizeRows)
    func fileDigest(_ row: SizeRow) async throws {
        let tree = TemporaryDirectory("digest")
        let bytes = PackFixture.bytes(row.size, seed: UInt64(row.size))
        tree.write("f.bin", bytes)
        let digest = try FileDigest.compute(path: tree.path + "/f.bin", chunkSize: Int64(row.chunkSize)).get()
        #expect(digest.size == Int64(row.size))
        #expect(digest.sha256 == (try await Self.sha256sum([tree.path + "/f.bin"]))[0])
        #expect(digest.chunks == Self.expectedChunks(bytes, chunkSize: row.chunkSize))
        // Tiling: contiguous from 0, every chunk full but the last, which is non-empty.
        #expect(digest.chunks.count == (row.size + row.chunkSize - 1) / row.chunkSize)
        #expect(digest.chunks.dropLast().allSatisfy { $0.length == Int64(row.chunkSize) })
        #expect(digest.chunks.last.map { $0.length > 0 } ?? true)
        if row.size == 0 {
            #expect(digest.chunks.isEmpty)
            #expect(digest.sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        }
    }

    @Test func fileDigestOfAMissingFileFails() {
        #expect(throws: FileDigest.Failure.self) {
            try FileDigest.compute(path: "/nonexistent/depot/f.bin", chunkSize: 4096).get()
        }
    }

    /// The publisher's manifest for a version holding every size at once (chunk size 4096).
    @Test func publisherManifest() async throws {
        try await TestDepot.with(sample: false) { depot in
            let sizes = [0, 1, 4095, 4096, 4097, 14336]
            var files: [String: [UInt8]] = [:]
            for size in sizes { files["sizes/\(size).bin"] = PackFixture.bytes(size, seed: UInt64(size) + 100) }
            let manifest = try PackFixture.publish(files, into: depot, pack: "sizes", at: 1_780_000_000)

            #expect(manifest.pack == "sizes")
            #expect(manifest.version == 1)
            #expect(manifest.productId == "com.example.depot.sizes")
            #expect(manifest.chunkSize == 4096)
            #expect(manifest.published == "2026-05-28T20:26:40Z")
            #expect(manifest.downloadBytes == Int64(sizes.reduce(0, +)))
            // Manifest order: paths sorted bytewise.
            #expect(manifest.files.map(\.path) == files.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            #expect(manifest.consistencyProblems(file: "m", expectedPack: "sizes", expectedVersion: 1).isEmpty)

            let versionDirectory = depot.contentDirectory + "/sizes/1"
            let sums = try await Self.sha256sum(manifest.files.map { versionDirectory + "/" + $0.path })
            for (file, sum) in zip(manifest.files, sums) {
                let bytes = try #require(files[file.path])
                // The copy in the version directory is the source, byte for byte.
                #expect(depot.tree.read("content/sizes/1/" + file.path) == bytes)
                #expect(file.size == Int64(bytes.count))
                #expect(file.sha256 == sum)
                #expect(file.etag == "\"\(sum)\"")
                #expect(file.url == "/v1/packs/sizes/1/files/" + file.path)
                #expect(file.chunks == Self.expectedChunks(bytes, chunkSize: 4096))
                if bytes.isEmpty { #expect(file.chunks.isEmpty) }
        }
        // `current` names the version; the manifest does not list itself.
        #expect(depot.tree.read("content/sizes/current") == Array("1\n".utf8))
        #expect(manifest.file(path: "manifest.json") == nil)
        }
    }

    /// The publisher's digest (computed while copying) and `FileDigest` (reading back) agree.
    @Test func publisherAndFileDigestAgree() async throws {
        try await TestDepot.with(sample: false) { depot in
            let files = ["a.bin": PackFixture.bytes(3 << 20 | 5, seed: 9)]
            let manifest = try PackFixture.publish(files, into: depot, pack: "agree", at: 1_780_000_000, chunkSize: 1 << 20)
            let digest = try FileDigest.compute(path: depot.contentDirectory + "/agree/1/a.bin", chunkSize: 1 << 20).get()
            let entry = try #require(manifest.files.first)
            #expect(entry.size == digest.size)
            #expect(entry.sha256 == digest.sha256)
            #expect(entry.chunks == digest.chunks)
            #expect(entry.chunks.count == 4)
        }
    }
}
