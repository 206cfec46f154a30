import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import DepotClient

/// A download creates nothing in the pack's directory but the pack's files, the journal, the installed version's
/// manifest and their own temporaries. Foundation's `FileManager.createFile` writes a `.dat.nosync…` file beside the one it creates and
/// renames it: a process killed in between leaves that among the pack's files, and no later run knows its name.
@Suite struct PackDirectoryEntriesTests {
    @Test func aDownloadCreatesOnlyThePacksFilesTheJournalAndTheSavedManifest() async throws {
        let files: [(String, Data)] = [("a.bin", sampleBytes(2500, seed: 7)), ("b.bin", sampleBytes(1000, seed: 8)), ("empty.txt", Data())]
        let fixture = PackFixture(files: files)
        defer { fixture.close() }
        try FileManager.default.createDirectory(at: fixture.destination, withIntermediateDirectories: true)
        let watch = try CreatedEntries(in: fixture.destination.path)
        defer { watch.close() }

        #expect(try await fixture.downloader().start().manifest != nil)
        fixture.expectInstalled(files)
        let created = watch.names()
        let journal = PackDownloadOptions.journalFileName
        let manifest = journal + ".manifest"
        #expect(created.isSuperset(of: ["a.bin", "b.bin", "empty.txt", journal, manifest]), "\(created.sorted())")
        #expect(created.isSubset(of: ["a.bin", "b.bin", "empty.txt", journal, journal + ".tmp", manifest, manifest + ".tmp"]), "\(created.sorted())")
    }
}

/// The names created in (or renamed into) one directory since `init`.
private final class CreatedEntries {
    private let events: InotifyEvents
    private var seen = Set<String>()

    init(in directory: String) throws {
        events = try InotifyEvents(watching: ["": directory], mask: Int32(IN_CREATE | IN_MOVED_TO))
    }

    /// Every name seen so far.
    func names() -> Set<String> {
        for event in events.drain() { seen.insert(event.name) }
        return seen
    }

    func close() { events.close() }
}
