import Foundation
import Testing
import DepotClient

/// A fake server holding pack `level2` version 1, a scratch destination, a manual clock and free space.
///
/// Files (chunk size 1000): `stages.bin` 2500 B (3 chunks), `audio/theme.ogg` 1000 B (1), `empty.txt` 0 B
/// (none), `maps/deep/level 1.map` 3001 B (4): 8 chunks, 6501 bytes, in that order.
struct PackFixture {
    static let files: [(String, Data)] = [
        ("stages.bin", sampleBytes(2500, seed: 1)),
        ("audio/theme.ogg", sampleBytes(1000, seed: 2)),
        ("empty.txt", Data()),
        ("maps/deep/level 1.map", sampleBytes(3001, seed: 3)),
    ]
    static let chunkCount = 8
    static let totalBytes: Int64 = 6501

    let server: FakeDepot
    let scratch = ScratchDirectory()
    let time = ManualClock()
    let space = ManualFreeSpace(1 << 40)

    init(files: [(String, Data)] = PackFixture.files) {
        server = FakeDepot(files: files, chunkSize: 1000)
    }

    var destination: URL { scratch.url.appendingPathComponent("packs/level2") }
    var client: DepotClient { server.client(clock: time.clock) }

    /// Sequential by default (the tests count and order requests); `parallel` for the concurrent path. One chunk
    /// per request by default (`runBytes` 1), so the tests see each chunk's request; `runBytes` coalesces runs.
    func options(verifyOnResume: Bool = true, reserve: SpaceReserve = .none, parallel: Int = 1, runBytes: Int64 = 1) -> PackDownloadOptions {
        PackDownloadOptions(freeSpace: space, reserve: reserve, verifyOnResume: verifyOnResume, parallelChunks: parallel, runBytes: runBytes)
    }

    /// A fresh downloader (as a new process would make) for the same destination.
    func downloader(token: String = "t1", verifyOnResume: Bool = true, reserve: SpaceReserve = .none, parallel: Int = 1,
                    runBytes: Int64 = 1, renewToken: (@Sendable () async throws -> String)? = nil) -> PackDownloader {
        PackDownloader(client: client, pack: "level2", token: token, destination: destination,
                       options: options(verifyOnResume: verifyOnResume, reserve: reserve, parallel: parallel, runBytes: runBytes),
                       renewToken: renewToken)
    }

    func close() {
        server.close()
        scratch.remove()
    }

    func contents(_ path: String) -> Data? { try? Data(contentsOf: destination.appendingPathComponent(path)) }

    func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: destination.appendingPathComponent(path).path)
    }

    /// Every file of `files` is on disk with exactly these bytes, and its SHA-256 is the manifest's.
    func expectInstalled(_ files: [(String, Data)] = PackFixture.files, manifest: DownloadManifest? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        for (path, data) in files {
            let onDisk = contents(path)
            #expect(onDisk == data, "\(path) differs", sourceLocation: sourceLocation)
            if let manifest, let entry = manifest.files.first(where: { $0.path == path }), let onDisk {
                #expect(FakeDepot.sha256(onDisk) == entry.sha256, "\(path) SHA-256", sourceLocation: sourceLocation)
            }
        }
    }

    /// The downloader's journal as saved on disk.
    var journal: DownloadJournal? {
        PackFileStore(root: destination, journalName: PackDownloadOptions.journalFileName).loadJournal()
    }
}

extension [PackDownloadEvent] {
    var restartedPaths: [String] { compactMap { if case .fileRestarted(let path) = $0 { path } else { nil } } }
    var rejectedChunks: [String] { compactMap { if case .chunkRejected(let path, let chunk) = $0 { "\(path)#\(chunk)" } else { nil } } }
    var progressEvents: [PackDownloadProgress] { compactMap { if case .progress(let progress) = $0 { progress } else { nil } } }
    var tokenRenewals: Int { filter { if case .tokenRenewed = $0 { true } else { false } }.count }
    var resumedBytes: Int64? {
        for event in self { if case .started(_, let bytes) = event { return bytes } }
        return nil
    }
}

extension PackDownloadOutcome {
    var manifest: DownloadManifest? { if case .completed(let manifest) = self { manifest } else { nil } }
    var isPaused: Bool { if case .paused = self { true } else { false } }
}
