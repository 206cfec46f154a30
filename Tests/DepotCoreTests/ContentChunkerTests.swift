import DepotCore
import DepotWire
import Foundation
import Testing

/// `pack-updates.md` §1: content-defined chunks (FastCDC with normalized chunking) — deterministic, bounded, and
/// local: an edit moves only the boundaries around it.
@Suite struct ContentChunkerTests {
    /// Deterministic pseudo-random bytes (SplitMix64), so failures reproduce.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            withUnsafeBytes(of: z.littleEndian) { out.append(contentsOf: $0) }
        }
        return Array(out.prefix(count))
    }

    static func chunks(_ data: [UInt8], average: Int64) -> [(offset: Int64, length: Int64)] {
        data.withUnsafeBytes { ContentChunker.chunks(of: $0, average: average) }
    }

    /// The chunks' byte strings (what identifies a chunk across versions).
    static func pieces(_ data: [UInt8], average: Int64) -> [ArraySlice<UInt8>] {
        chunks(data, average: average).map { data[Int($0.offset)..<Int($0.offset + $0.length)] }
    }

    @Test func theGearTableIsSplitMix64FromItsSeed() {
        var state = GearTable.seed
        for value in GearTable.values {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            #expect(value == z)
        }
        #expect(GearTable.values.count == 256)
        #expect(GearTable.seed == UInt64(bigEndian: Array("depot-cd".utf8).withUnsafeBytes { $0.load(as: UInt64.self) }))
    }

    @Test func constantsFollowTheAverage() {
        let chunker = ContentChunker(average: 256 << 10)
        #expect(chunker.minimum == 64 << 10)
        #expect(chunker.maximum == 1 << 20)
        // b = 18: the strict mask has 18 high bits, the loose one 17 (FastCDC's level 2, 20 and 16 bits, until
        // 2026-12-02: the chunking fell back onto old boundaries slowly after an insertion; see ContentChunker).
        #expect(chunker.strictMask == 0xFFFF_C000_0000_0000)
        #expect(chunker.looseMask == 0xFFFF_8000_0000_0000)
        #expect(chunker.chunking == .content(min: 64 << 10, average: 256 << 10, max: 1 << 20))
        #expect(ContentChunker.roundedLog2(1024) == 10)
        #expect(ContentChunker.roundedLog2(1448) == 10)   // below 2^10.5
        #expect(ContentChunker.roundedLog2(1449) == 11)
    }

    @Test func everyChunkIsWithinMinAndMaxExceptTheLast() {
        let average: Int64 = 16 << 10
        let data = Self.bytes(3 << 20, seed: 1)
        let chunks = Self.chunks(data, average: average)
        #expect(chunks.first?.offset == 0)
        #expect(chunks.reduce(0) { $0 + $1.length } == Int64(data.count))
        for (a, b) in zip(chunks, chunks.dropFirst()) { #expect(a.offset + a.length == b.offset) }
        for chunk in chunks.dropLast() { #expect(chunk.length > average / 4 && chunk.length <= average * 4) }
        // Normalized chunking keeps the mean near the average.
        let mean = Double(data.count) / Double(chunks.count)
        #expect(mean > Double(average) * 0.6 && mean < Double(average) * 1.6, "mean \(mean)")
    }

    @Test func zerosAreCutAtTheMaximum() {
        // A long run of one byte value: the hash settles into a cycle, and the bounds still hold.
        let data = [UInt8](repeating: 0, count: 1 << 20)
        for chunk in Self.chunks(data, average: 8192).dropLast() { #expect(chunk.length > 2048 && chunk.length <= 32768) }
    }

    @Test func identicalBytesGiveIdenticalChunksWhateverThePieces() {
        let data = Self.bytes(1 << 20, seed: 2)
        let whole = Self.chunks(data, average: 8192)
        #expect(Self.chunks(data, average: 8192).map(\.length) == whole.map(\.length))
        // Fed in odd pieces, the chunker finds the same boundaries.
        var chunker = ContentChunker(average: 8192)
        var cuts: [Int64] = []
        var position: Int64 = 0
        var start = 0
        let pieceSizes = [1, 7, 4093, 65536, 3, 100_000]
        var p = 0
        data.withUnsafeBytes { all in
            while start < all.count {
                let end = min(all.count, start + pieceSizes[p % pieceSizes.count])
                p += 1
                let piece = UnsafeRawBufferPointer(rebasing: all[start..<end])
                var at = 0
                while at < piece.count, let cut = chunker.boundary(in: piece, from: at) {
                    cuts.append(position + Int64(cut))
                    at = cut
                }
                position += Int64(piece.count)
                start = end
            }
        }
        #expect(cuts == whole.dropLast().map { $0.offset + $0.length })
    }

    @Test func anInsertionInTheMiddleChangesOnlyTheChunksAroundIt() {
        let average: Int64 = 8192
        let old = Self.bytes(2 << 20, seed: 3)
        var new = old
        let at = old.count / 2
        new.insert(contentsOf: Self.bytes(5000, seed: 4), at: at)
        let before = Self.chunks(old, average: average)
        let after = Self.chunks(new, average: average)
        // Boundaries before the insertion are the same; after it they are the old ones shifted by 5000, from the
        // first boundary past the edit on.
        let oldCuts = before.map { $0.offset + $0.length }
        let newCuts = after.map { $0.offset + $0.length }
        #expect(Array(newCuts.prefix { $0 <= Int64(at) }) == Array(oldCuts.prefix { $0 <= Int64(at) }))
        let shiftedOld = Set(oldCuts.filter { $0 > Int64(at) }.map { $0 + 5000 })
        let lateNew = newCuts.filter { $0 > Int64(at) + 5000 }
        let resynchronized = lateNew.filter { !shiftedOld.contains($0) }
        #expect(resynchronized.count <= 2, "boundaries that did not come back: \(resynchronized)")
        // So almost every chunk's bytes are found again: at most 3 chunks differ (the one hit, maybe a neighbour).
        let oldPieces = Set(Self.pieces(old, average: average).map { Array($0) })
        let changed = Self.pieces(new, average: average).filter { !oldPieces.contains(Array($0)) }
        #expect(changed.count >= 1 && changed.count <= 3, "\(changed.count) chunks changed")
        #expect(changed.reduce(0) { $0 + $1.count } < 5000 + 3 * Int(average) * 4)
    }

    @Test func aFixedChunkingWouldShiftEverything() {
        // The contrast the design is for: one inserted byte moves every fixed chunk after it.
        let old = Self.bytes(1 << 20, seed: 5)
        var new = old
        new.insert(7, at: 1000)
        let fixedOld = Set(stride(from: 0, to: old.count, by: 8192).map { Array(old[$0..<min(old.count, $0 + 8192)]) })
        let fixedNew = stride(from: 0, to: new.count, by: 8192).map { Array(new[$0..<min(new.count, $0 + 8192)]) }
        #expect(fixedNew.filter { fixedOld.contains($0) }.isEmpty)
        let cdcOld = Set(Self.pieces(old, average: 8192).map { Array($0) })
        let cdcNew = Self.pieces(new, average: 8192).map { Array($0) }
        #expect(cdcNew.filter { !cdcOld.contains($0) }.count <= 2)
    }

    @Test func contentManifestsAreCheckedForTheirBounds() {
        let chunking = ContentChunker(average: 4096).chunking
        func manifest(_ lengths: [Int64]) -> PackManifest {
            var offset: Int64 = 0
            let chunks = lengths.map { length -> PackManifest.Chunk in
                defer { offset += length }
                return PackManifest.Chunk(offset: offset, length: length, sha256: String(repeating: "a", count: 64))
            }
            let file = PackManifest.File(path: "f", size: offset, sha256: String(repeating: "b", count: 64),
                                         etag: PackManifest.entityTag(forSHA256: String(repeating: "b", count: 64)),
                                         url: PackManifest.url(pack: "p", version: 1, path: "f"), chunks: chunks)
            return PackManifest(pack: "p", version: 1, productId: nil, chunkSize: 16384, chunking: chunking,
                                published: "2026-01-01T00:00:00Z", files: [file])
        }
        #expect(manifest([2000, 9000, 16384, 10]).consistencyProblems(file: "m", expectedPack: "p", expectedVersion: 1).isEmpty)
        #expect(!manifest([500, 9000]).consistencyProblems(file: "m", expectedPack: "p", expectedVersion: 1).isEmpty)
        #expect(!manifest([16385]).consistencyProblems(file: "m", expectedPack: "p", expectedVersion: 1).isEmpty)
        var wrongMax = manifest([2000])
        wrongMax.chunkSize = 8192
        #expect(!wrongMax.consistencyProblems(file: "m", expectedPack: "p", expectedVersion: 1).isEmpty)
    }
}
