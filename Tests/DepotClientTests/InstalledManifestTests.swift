import DepotClient
import Foundation
import Testing

/// The installed version's saved manifest (`.depot-download.json.manifest`): used for local reuse only when it
/// describes exactly what the journal records, and matching chunks by SHA-256 and length.
@Suite struct InstalledManifestTests {
    static let a = String(repeating: "a", count: 64)
    static let b = String(repeating: "b", count: 64)
    static let c = String(repeating: "c", count: 64)

    static func manifest(version: Int, _ files: [(String, [(Int64, String)])]) -> DownloadManifest {
        DownloadManifest(pack: "level2", version: version, productId: nil, chunkSize: 1000, files: files.map { path, chunks in
            var offset: Int64 = 0
            let cut = chunks.map { length, sha in
                defer { offset += length }
                return PackManifest.Chunk(offset: offset, length: length, sha256: sha)
            }
            return PackManifest.File(path: path, size: offset, sha256: Self.a, etag: "\"\(path)\"", url: "/x/\(path)", chunks: cut)
        })
    }

    static let installed = manifest(version: 1, [("stages.bin", [(1000, a), (500, b)]), ("audio/theme.ogg", [(1000, c)]), ("empty.txt", [])])

    static func journal(of manifest: DownloadManifest, completed: Bool = true) -> DownloadJournal {
        var journal = DownloadJournal(pack: manifest.pack, version: manifest.version)
        for file in manifest.files {
            var record = DownloadJournal.FileRecord(file)
            record.verified = Set(file.chunks.indices)
            journal.files[file.path] = record
        }
        journal.completed = completed
        return journal
    }

    @Test func itDescribesOnlyTheCompleteJournalOfTheSameVersionAndFiles() {
        let saved = InstalledManifest(Self.installed)
        #expect(saved.describes(Self.journal(of: Self.installed)))
        #expect(!saved.describes(Self.journal(of: Self.installed, completed: false)))
        #expect(!saved.describes(Self.journal(of: Self.manifest(version: 2, [("stages.bin", [(1000, Self.a), (500, Self.b)]),
                                                                             ("audio/theme.ogg", [(1000, Self.c)]), ("empty.txt", [])]))))
        var otherPack = DownloadJournal(pack: "level3", version: 1)
        otherPack.files = Self.journal(of: Self.installed).files
        otherPack.completed = true
        #expect(!saved.describes(otherPack))
        // A file more or less, another size, another first chunk length: not this installation.
        #expect(!saved.describes(Self.journal(of: Self.manifest(version: 1, [("stages.bin", [(1000, Self.a), (500, Self.b)])]))))
        #expect(!saved.describes(Self.journal(of: Self.manifest(version: 1, [("stages.bin", [(1000, Self.a), (400, Self.b)]),
                                                                             ("audio/theme.ogg", [(1000, Self.c)]), ("empty.txt", [])]))))
        #expect(!saved.describes(Self.journal(of: Self.manifest(version: 1, [("stages.bin", [(500, Self.a), (1000, Self.b)]),
                                                                             ("audio/theme.ogg", [(1000, Self.c)]), ("empty.txt", [])]))))
        // Chunks that do not tile the file, a bad digest, an unsafe path: never used.
        var gap = saved
        gap.files[0].chunks[1].offset = 1001
        #expect(!gap.describes(Self.journal(of: Self.installed)))
        var digest = saved
        digest.files[1].chunks[0].sha256 = "zz"
        #expect(!digest.describes(Self.journal(of: Self.installed)))
        var unsafe = saved
        var unsafeJournal = Self.journal(of: Self.installed)
        unsafe.files[2].path = "../empty.txt"
        unsafeJournal.files["../empty.txt"] = unsafeJournal.files.removeValue(forKey: "empty.txt")
        #expect(!unsafe.describes(unsafeJournal))
    }

    @Test func markingReuseMatchesBySHA256AndLengthAndSetsTheFigures() {
        let index = InstalledManifest(Self.installed).index()
        // b at another length is not the same chunk; c moved to another file; a twice; d is new.
        let d = String(repeating: "d", count: 64)
        let next = Self.manifest(version: 2, [("stages.bin", [(1000, Self.a), (400, Self.b), (1000, Self.a)]),
                                              ("new/theme.ogg", [(1000, Self.c.uppercased()), (700, d)])])
        let marked = next.markingReuse(index, from: 1)
        let reuse = marked.files.flatMap(\.chunks).map { $0.reuse.map { "\($0.path)@\($0.offset)" } ?? "fetch" }
        #expect(reuse == ["stages.bin@0", "fetch", "stages.bin@0", "audio/theme.ogg@0", "fetch"])
        #expect(marked.delta?.summary == PackDelta.Summary(from: 1, reuseBytes: 3000, fetchBytes: 1100))
        #expect(InstalledManifest(marked) == InstalledManifest(next))
    }

    @Test func cancelRemovesTheSavedManifestWithTheJournal() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        guard case .completed(let manifest) = try await fixture.downloader().start() else { Issue.record("not completed"); return }
        let store = PackFileStore(root: fixture.destination, journalName: PackDownloadOptions.journalFileName)
        #expect(store.loadInstalledManifest() == InstalledManifest(manifest))
        #expect(store.loadInstalledManifest()?.describes(try #require(fixture.journal)) == true)
        await fixture.downloader().cancel()
        #expect(!fixture.exists(PackDownloadOptions.journalFileName))
        #expect(!fixture.exists(PackDownloadOptions.journalFileName + ".manifest"))
        #expect(!fixture.exists("stages.bin"))
    }
}
