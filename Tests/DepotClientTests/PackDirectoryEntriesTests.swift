import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import DepotClient

/// A download creates nothing in the pack's directory but the pack's files, the journal and the journal's own
/// temporary. Foundation's `FileManager.createFile` writes a `.dat.nosync…` file beside the one it creates and
/// renames it: a process killed in between leaves that among the pack's files, and no later run knows its name.
@Suite struct PackDirectoryEntriesTests {
    @Test func aDownloadCreatesOnlyThePacksFilesAndTheJournal() async throws {
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
        #expect(created.isSuperset(of: ["a.bin", "b.bin", "empty.txt", journal]), "\(created.sorted())")
        #expect(created.isSubset(of: ["a.bin", "b.bin", "empty.txt", journal, journal + ".tmp"]), "\(created.sorted())")
    }
}

/// The names created in (or renamed into) one directory since `init`, from inotify.
private final class CreatedEntries {
    private let descriptor: Int32

    init(in directory: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
            let error = POSIXError(.init(rawValue: errno) ?? .EIO)
            Glibc.close(descriptor)
            throw error
        }
    }

    /// Every name seen so far (each event is a 16-byte header and a NUL-padded name of the header's length).
    func names() -> Set<String> {
        var names = Set<String>()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { return names }
            var offset = 0
            while offset + 16 <= count {
                let length = buffer[offset + 12..<offset + 16].reversed().reduce(0) { $0 << 8 | Int($1) }
                let name = buffer[offset + 16..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if !name.isEmpty { names.insert(String(decoding: name, as: UTF8.self)) }
                offset += 16 + length
            }
        }
    }

    func close() { Glibc.close(descriptor) }
}
