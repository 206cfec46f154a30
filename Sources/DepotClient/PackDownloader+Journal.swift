import Foundation

extension PackDownloader {
    /// Makes `manifest` the one in use: carries the journal over (the one on disk on the first run of this
    /// instance), deletes files that changed or left the pack, re-checks chunks recorded by an earlier
    /// process, and recomputes progress. Writes nothing new. The file work runs on ``fileWork``.
    func adopt(_ manifest: DownloadManifest) async throws {
        var base = journal
        var fromDisk = false
        if base == nil, !journalLoaded, let saved = try await fileWork.run({ [store, pack] in Self.loadSavedJournal(store, pack: pack) }) {
            base = saved
            fromDisk = true
        }
        journalLoaded = true
        let (next, restarted, dropped) = (base ?? DownloadJournal(pack: pack, version: manifest.version)).adopting(manifest)
        if !dropped.isEmpty || !restarted.isEmpty {
            try await fileWork.run { [store] in for path in dropped + restarted { store.remove(path) } }
        }
        for path in restarted { emit(.fileRestarted(path: path)) }
        journal = next
        if fromDisk, let recorded = journal {
            let (checked, rejected) = try await fileWork.run { [store, options] in
                try Self.recheck(recorded, of: manifest, in: store, options: options)
            }
            journal = checked
            for (path, chunk) in rejected { emit(.chunkRejected(path: path, chunk: chunk)) }
        }
        self.manifest = manifest
        progress.totalBytes = manifest.downloadBytes
        progress.completedBytes = journal?.verifiedBytes(manifest) ?? 0
    }

    /// Saves the journal (when there is one) on ``fileWork``, after the writes handed in before.
    func saveJournal() async throws {
        guard let journal else { return }
        try await fileWork.run { [store] in try store.saveJournal(journal) }
    }

    /// The journal on disk, when it is this pack's and names only safe paths.
    private nonisolated static func loadSavedJournal(_ store: PackFileStore, pack: String) -> DownloadJournal? {
        guard let saved = store.loadJournal(), saved.pack == pack else { return nil }
        for path in saved.files.keys {
            guard (try? ManifestPath.check(path, reserved: PackDownloadOptions.journalFileName)) != nil else { return nil }
        }
        return saved
    }

    /// Chunks recorded by an earlier process: re-hashed from disk (``PackDownloadOptions/verifyOnResume``),
    /// or at least present (file long enough). Returns the journal without the failures (fetched again) and the
    /// failures, as path and chunk index.
    private nonisolated static func recheck(_ recorded: DownloadJournal, of manifest: DownloadManifest, in store: PackFileStore,
                                            options: PackDownloadOptions) throws -> (DownloadJournal, [(String, Int)]) {
        var journal = recorded
        var rejected: [(String, Int)] = []
        for file in manifest.files {
            guard var record = journal.files[file.path], !record.verified.isEmpty else { continue }
            let size = (try? FileManager.default.attributesOfItem(atPath: store.url(file.path).path)[.size] as? NSNumber)?
                .map { $0.int64Value } ?? -1
            for index in record.verified.sorted() {
                let chunk = file.chunks[index]
                var good = size >= chunk.offset + chunk.length
                if good, options.verifyOnResume {
                    let bytes = store.read(file.path, at: chunk.offset, length: chunk.length)
                    good = try bytes.map { try Self.hashMatches($0, sha256: chunk.sha256, with: options.hasher) } ?? false
                }
                if !good {
                    record.verified.remove(index)
                    rejected.append((file.path, index))
                }
            }
            journal.files[file.path] = record
        }
        return (journal, rejected)
    }

    /// For ``cancel()``: every file of the pack this download knows of, then the journal (on ``fileWork``).
    func removeDownloadedFiles() async {
        var known = journal
        if known == nil, !journalLoaded {
            known = try? await fileWork.run { [store, pack] in Self.loadSavedJournal(store, pack: pack) }
        }
        var paths = Set(known?.files.keys.map { $0 } ?? [])
        for file in manifest?.files ?? [] { paths.insert(file.path) }
        _ = try? await fileWork.run { [store, paths] in
            for path in paths.sorted() { store.remove(path) }
            store.removeJournal()
        }
        journal = nil
        journalLoaded = true
        progress.completedBytes = 0
    }
}
