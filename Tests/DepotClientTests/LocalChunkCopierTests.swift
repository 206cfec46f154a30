import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import DepotClient

/// An update's copier opens each installed file, and each new file it writes, once per batch, not once per chunk (with
/// small content-defined chunks the opens and closes cost more than the copying). Opens are counted by inotify, which
/// sees every `open` of a file in a watched directory, whatever code makes it.
@Suite struct LocalChunkCopierTests {
    static let chunk = 1000

    /// Chunk `index` of the new version's `path`, whose bytes are chunk `sourceChunk` of the installed `sourcePath`.
    static func copy(_ data: Data, _ sourcePath: String, chunk sourceChunk: Int, to path: String, index: Int) -> LocalChunkCopier.Copy {
        let bytes = data.subdata(in: sourceChunk * chunk..<(sourceChunk + 1) * chunk)
        return LocalChunkCopier.Copy(path: path, index: index,
                                     chunk: .init(offset: Int64(index * chunk), length: Int64(chunk), sha256: FakeDepot.sha256(bytes)),
                                     sourcePath: sourcePath, sourceOffset: Int64(sourceChunk * chunk))
    }

    @Test func eachFileIsOpenedOncePerBatch() async throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let installed = scratch.url.appendingPathComponent("installed")
        let assembled = scratch.url.appendingPathComponent("assembled")
        for directory in [installed, assembled] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        let a = sampleBytes(40 * Self.chunk, seed: 21)
        let b = sampleBytes(10 * Self.chunk, seed: 22)
        try a.write(to: installed.appendingPathComponent("a.bin"))
        try b.write(to: installed.appendingPathComponent("b.bin"))
        // The new files exist already (as after an earlier batch): writing them is one open each.
        try Data().write(to: assembled.appendingPathComponent("x.bin"))
        try Data().write(to: assembled.appendingPathComponent("y.bin"))
        let copier = LocalChunkCopier(source: PackFileStore(root: installed, journalName: PackDownloadOptions.journalFileName),
                                      target: PackFileStore(root: assembled, journalName: PackDownloadOptions.journalFileName),
                                      hasher: SHA256ChunkHasher())

        // One batch: a.bin's first 10 chunks into x.bin and b.bin's 10 into y.bin, taken in turn; then a chunk whose
        // installed bytes do not match its digest and one from a file the installed version lacks (both: fetch).
        var batch: [LocalChunkCopier.Copy] = []
        for index in 0..<10 {
            batch.append(Self.copy(a, "a.bin", chunk: index, to: "x.bin", index: index))
            batch.append(Self.copy(b, "b.bin", chunk: index, to: "y.bin", index: index))
        }
        batch.append(LocalChunkCopier.Copy(path: "x.bin", index: 10, chunk: .init(offset: 10_000, length: 1000, sha256: String(repeating: "0", count: 64)),
                                           sourcePath: "a.bin", sourceOffset: 10_000))
        batch.append(LocalChunkCopier.Copy(path: "x.bin", index: 11, chunk: .init(offset: 11_000, length: 1000, sha256: FakeDepot.sha256(a[11_000..<12_000])),
                                           sourcePath: "gone.bin", sourceOffset: 0))
        let opens = try FileOpens(watching: ["installed": installed.path, "assembled": assembled.path])
        defer { opens.close() }
        #expect(try await copier.run(batch) == Array(repeating: true, count: 20) + [false, false])
        #expect(opens.counts() == ["installed/a.bin": 1, "installed/b.bin": 1, "assembled/x.bin": 1, "assembled/y.bin": 1])

        // A second batch, the rest of a.bin: each of its two files is opened once more.
        let second = (10..<40).map { Self.copy(a, "a.bin", chunk: $0, to: "x.bin", index: $0) }
        #expect(try await copier.run(second) == Array(repeating: true, count: 30))
        #expect(opens.counts() == ["installed/a.bin": 2, "installed/b.bin": 1, "assembled/x.bin": 2, "assembled/y.bin": 1])
        #expect(try Data(contentsOf: assembled.appendingPathComponent("x.bin")) == a)
        #expect(try Data(contentsOf: assembled.appendingPathComponent("y.bin")) == b)
    }
}

/// Opens of files in some directories since `init`, by `"<label>/<name>"`. Closes are watched too, so that two
/// opens of one file never queue as two identical events in a row (inotify merges those).
private final class FileOpens {
    private let events: InotifyEvents
    private var seen: [String: Int] = [:]

    init(watching directories: [String: String]) throws {
        events = try InotifyEvents(watching: directories, mask: Int32(IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE))
    }

    /// Every open counted so far.
    func counts() -> [String: Int] {
        for event in events.drain() where event.mask & UInt32(IN_OPEN) != 0 { seen["\(event.label)/\(event.name)", default: 0] += 1 }
        return seen
    }

    func close() { events.close() }
}
