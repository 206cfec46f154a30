import DepotWire
public import Foundation

/// Updating an installed version (`pack-updates.md` §2): the new version is assembled in a directory beside the
/// destination (``updateDirectory``, same volume) from chunks copied out of the installed files (each copy's
/// SHA-256 checked; a mismatch is fetched instead) and chunks fetched from the server; then the two
/// directories are exchanged in one atomic step and the old version is removed. The installed version is never
/// written to before the switch, and every step resumes: the new version's journal lives in its own directory.
extension PackDownloader {
    /// `.<name>.depot-update` beside the destination: the version being assembled, and after the switch, until it
    /// is removed, the old one.
    public nonisolated var updateDirectory: URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).depot-update")
    }

    /// Where the old version goes when the directories cannot be exchanged atomically (two renames instead).
    nonisolated var retiredDirectory: URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).depot-old")
    }

    private nonisolated func journal(in directory: URL) -> DownloadJournal? {
        PackFileStore(root: directory, journalName: PackDownloadOptions.journalFileName).loadJournal()
    }

    private nonisolated func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    /// Decides whether this run updates an installed version, and returns the manifest to work on: for an update,
    /// the live version's manifest with `?from=<installed>` (chunks to copy marked `reuse`).
    func prepareUpdate(live: DownloadManifest) async throws -> DownloadManifest {
        let installed = try await fileWork.run { [self] in
            recoverInterruptedSwitch()
            return journal(in: destination)
        }
        guard let installed, installed.pack == pack, installed.completed, installed.version < live.version else {
            // Not an update: whatever is left beside the destination (an old version after the switch, an update
            // given up) goes, and the download works in the destination itself.
            try await fileWork.run { [self, updating = updateFrom != nil] in
                if updating || exists(updateDirectory) { try? FileManager.default.removeItem(at: updateDirectory) }
            }
            updateFrom = nil
            store = PackFileStore(root: destination, journalName: PackDownloadOptions.journalFileName)
            return live
        }
        let manifest = try await fetchDelta(version: live.version, from: installed.version)
        if updateFrom != installed.version {
            updateFrom = installed.version
            store = PackFileStore(root: updateDirectory, journalName: PackDownloadOptions.journalFileName)
            journal = nil
            journalLoaded = false
            rejectedCopies = []
        }
        return manifest
    }

    /// The manifest to carry on with after a file changed: during an update, again with `?from=`.
    func refreshManifest() async throws -> DownloadManifest {
        let live = try await fetchManifest()
        guard let from = updateFrom else { return live }
        return try await fetchDelta(version: live.version, from: from)
    }

    /// `GET /v1/packs/{pack}/{version}/manifest?from={from}`. When the server has no delta from `from` (`"delta":
    /// null` or none: that version was pruned), the reuse is computed here from the installed version's saved
    /// manifest (``InstalledManifest``), when there is a usable one; without one, every chunk is fetched.
    func fetchDelta(version: Int, from: Int) async throws -> DownloadManifest {
        let manifest = try await fetchManifest(path: WirePath.versionManifest(pack: pack, version: version) + "?from=\(from)")
        guard manifest.version == version else { throw DepotClientError.invalidResponse("asked for version \(version), got \(manifest.version)") }
        guard manifest.delta?.summary == nil else { return manifest }
        if localReuse?.from != from {
            let index = try await fileWork.run { [self] () -> InstalledManifest.Index? in
                let installed = PackFileStore(root: destination, journalName: PackDownloadOptions.journalFileName)
                guard let journal = installed.loadJournal(), journal.pack == pack, journal.version == from,
                      let saved = installed.loadInstalledManifest(), saved.describes(journal) else { return nil }
                return saved.index()
            }
            localReuse = (from, index)
        }
        guard let index = localReuse?.index else { return manifest }
        return manifest.markingReuse(index, from: from)
    }

    /// The whole new version must fit beside the installed one: what is not yet verified (copies and fetches)
    /// plus the reserve.
    func checkUpdateSpace(_ manifest: DownloadManifest) throws {
        let missing = manifest.downloadBytes - (journal?.verifiedBytes(manifest) ?? 0)
        try checkSpace(for: max(0, missing))
    }

    /// Copies every chunk marked `reuse` that is not verified yet from the installed files, in batches off the
    /// actor; a copy whose SHA-256 does not match is left to be fetched.
    func copyReusableChunks(of manifest: DownloadManifest) async throws {
        guard updateFrom != nil else { return }
        var batch: [LocalChunkCopier.Copy] = []
        var batchBytes: Int64 = 0
        for file in manifest.files {
            for (index, chunk) in file.chunks.enumerated() {
                guard let reuse = chunk.reuse, !(journal?.isVerified(file.path, chunk: index) ?? false),
                      !rejectedCopies.contains(Self.copyKey(file.path, index)) else { continue }
                batch.append(LocalChunkCopier.Copy(path: file.path, index: index, chunk: chunk, sourcePath: reuse.path, sourceOffset: reuse.offset))
                batchBytes += chunk.length
                if batchBytes >= LocalChunkCopier.batchBytes {
                    try await copy(batch)
                    batch = []
                    batchBytes = 0
                }
            }
        }
        if !batch.isEmpty { try await copy(batch) }
    }

    static func copyKey(_ path: String, _ index: Int) -> String { "\(index):\(path)" }

    private func copy(_ batch: [LocalChunkCopier.Copy]) async throws {
        if stopRequest != nil || Task.isCancelled { throw CancellationError() }
        try checkSpace(for: batch.reduce(0) { $0 + $1.chunk.length })
        let copier = LocalChunkCopier(source: PackFileStore(root: destination, journalName: PackDownloadOptions.journalFileName),
                                      target: store, hasher: options.hasher, work: fileWork)
        let results = try await copier.run(batch)
        for (copy, copied) in zip(batch, results) {
            if copied {
                journal?.files[copy.path]?.verified.insert(copy.index)
                recordProgress(bytes: copy.chunk.length, path: copy.path, reused: true)
            } else {
                rejectedCopies.insert(Self.copyKey(copy.path, copy.index))
                emit(.chunkRejected(path: copy.path, chunk: copy.index))
            }
        }
        try await saveJournal()
    }

    /// The new version is complete and its journal says so: exchange it with the installed one, then remove the
    /// old one (on ``fileWork``). Without an atomic exchange, two renames; ``recoverInterruptedSwitch()`` completes
    /// them after a crash.
    func switchToUpdate() async throws {
        try await fileWork.run { [self] in try exchangeDirectories() }
        updateFrom = nil
        store = PackFileStore(root: destination, journalName: PackDownloadOptions.journalFileName)
        journalLoaded = true
    }

    private nonisolated func exchangeDirectories() throws {
        let manager = FileManager.default
        if !DirectorySwap.exchange(updateDirectory, destination) {
            try? manager.removeItem(at: retiredDirectory)
            do {
                try manager.moveItem(at: destination, to: retiredDirectory)
                try manager.moveItem(at: updateDirectory, to: destination)
            } catch {
                throw DepotClientError.fileSystem(path: destination.path, underlying: error)
            }
            try? manager.removeItem(at: retiredDirectory)
        } else {
            try? manager.removeItem(at: updateDirectory)
        }
    }

    /// After a crash between the two renames of a switch: the destination is missing and the new version is
    /// complete beside it, so it is moved in; an old version left over is removed.
    nonisolated func recoverInterruptedSwitch() {
        let manager = FileManager.default
        if !exists(destination), exists(updateDirectory), let pending = journal(in: updateDirectory), pending.pack == pack, pending.completed {
            try? manager.moveItem(at: updateDirectory, to: destination)
        }
        if exists(destination), exists(retiredDirectory) { try? manager.removeItem(at: retiredDirectory) }
    }
}
