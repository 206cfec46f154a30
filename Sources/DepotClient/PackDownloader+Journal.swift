import Foundation

extension PackDownloader {
    /// Makes `manifest` the one in use: carries the journal over (the one on disk on the first run of this
    /// instance), deletes files that changed or left the pack, re-checks chunks recorded by an earlier
    /// process, and recomputes progress. Writes nothing new.
    func adopt(_ manifest: DownloadManifest) throws {
        var base = journal
        var fromDisk = false
        if base == nil, !journalLoaded, let saved = loadSavedJournal() {
            base = saved
            fromDisk = true
        }
        journalLoaded = true
        let (next, restarted, dropped) = (base ?? DownloadJournal(pack: pack, version: manifest.version)).adopting(manifest)
        for path in dropped { store.remove(path) }
        for path in restarted {
            store.remove(path)
            emit(.fileRestarted(path: path))
        }
        journal = next
        if fromDisk { try recheck(manifest) }
        self.manifest = manifest
        progress.totalBytes = manifest.downloadBytes
        progress.completedBytes = journal?.verifiedBytes(manifest) ?? 0
    }

    /// The journal on disk, when it is this pack's and names only safe paths.
    private func loadSavedJournal() -> DownloadJournal? {
        guard let saved = store.loadJournal(), saved.pack == pack else { return nil }
        for path in saved.files.keys {
            guard (try? ManifestPath.check(path, reserved: PackDownloadOptions.journalFileName)) != nil else { return nil }
        }
        return saved
    }

    /// Chunks recorded by an earlier process: re-hashed from disk (``PackDownloadOptions/verifyOnResume``),
    /// or at least present (file long enough). Failures are forgotten and fetched again.
    private func recheck(_ manifest: DownloadManifest) throws {
        guard var journal else { return }
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
                    emit(.chunkRejected(path: file.path, chunk: index))
                }
            }
            journal.files[file.path] = record
        }
        self.journal = journal
    }

    /// For ``cancel()``: every file of the pack this download knows of, then the journal.
    func removeDownloadedFiles() {
        if journal == nil, !journalLoaded { journal = loadSavedJournal() }
        var paths = Set(journal?.files.keys.map { $0 } ?? [])
        for file in manifest?.files ?? [] { paths.insert(file.path) }
        for path in paths.sorted() { store.remove(path) }
        store.removeJournal()
        journal = nil
        journalLoaded = true
        progress.completedBytes = 0
    }
}
