package import DepotCore
package import Foundation
import Platform
import Synchronization

/// Holds the current snapshot and replaces it when the files change (hot reload, spec §4.1, issue 5).
///
/// A ``DirectoryWatcher`` wakes on inotify events in the catalog, content and pack directories, and at least
/// every `pollInterval`, and compares cheap `stat`/`readdir` fingerprints; on a change the store builds a new
/// snapshot off the event loops and swaps it in atomically.
/// A snapshot that fails to build never replaces a good one: the failure is logged and kept for `/healthz`.
public final class CatalogStore: Sendable {
    let paths: DepotPaths
    let cacheControl: String
    let logger: Logger
    let manifestCache = ManifestCache()
    private let state = Mutex<(snapshot: DepotSnapshot?, failure: CatalogProblems?, fingerprint: String)>((nil, nil, ""))
    private let watching = Mutex<DirectoryWatcher?>(nil)
    private let pollInterval: Duration
    /// Copies of the lists to keep, one per event loop.
    let replicaCount: Int
    /// Bumped after every swap; loops compare it to the generation of the snapshot they hold.
    let generation = Atomic<Int>(0)

    /// A store of the catalog and content under `paths`, not loaded yet (`reload()`) and not watching (`startWatching()`).
    package init(paths: DepotPaths, cacheControl: String, logger: Logger, pollInterval: Duration = .milliseconds(400), replicaCount: Int = 1) {
        self.replicaCount = replicaCount
        self.paths = paths
        self.cacheControl = cacheControl
        self.logger = logger
        self.pollInterval = pollInterval
    }

    /// The snapshot requests read (nil until a catalog loaded successfully once).
    package var current: DepotSnapshot? { state.withLock { $0.snapshot } }

    /// Why the latest attempt to load failed, if it did.
    var lastFailure: CatalogProblems? { state.withLock { $0.failure } }

    /// Loads now (blocking). Returns the problems when the files are not usable.
    /// `logger` is the store's own unless a request caused the reload (its lines then carry the request's ID).
    @discardableResult
    package func reload(logger: Logger? = nil) -> CatalogProblems? {
        // One reload at a time (the watcher, a publish by HTTP, a test): the later one reads the files after
        // the earlier one, so a stale build never replaces a newer one.
        reloading.withLock { _ in reloadNow(logger: logger ?? self.logger) }
    }

    private let reloading = Mutex<Void>(())
    private let swapHandler = Mutex<(@Sendable () -> Void)?>(nil)

    /// Called after every swap (on the reloading thread), e.g. to let each loop drop what it kept of the old snapshot.
    func onSwap(_ handler: @escaping @Sendable () -> Void) { swapHandler.withLock { $0 = handler } }
    private let lastSwap = Mutex<Date?>(nil)

    /// When a snapshot was last swapped in (tests measure the reload latency from the server's side).
    package var lastSwapTime: Date? { lastSwap.withLock { $0 } }

    private func reloadNow(logger: Logger) -> CatalogProblems? {
        let started = ContinuousClock.now
        let fingerprint = currentFingerprint()
        switch SnapshotLoader.load(paths: paths, cacheControl: cacheControl, manifestCache: manifestCache, replicaCount: replicaCount) {
        case .success(let snapshot):
            let previous = state.withLock { s -> DepotSnapshot? in
                let old = s.snapshot
                s = (snapshot, nil, fingerprint)
                return old
            }
            generation.add(1, ordering: .releasing)
            lastSwap.withLock { $0 = Date() }
            swapHandler.withLock { $0 }?()
            for warning in snapshot.warnings where !(previous?.warnings.contains(warning) ?? false) {
                logger.warning(.contentWarning, "content: \(warning)")
            }
            var directories = Set<String>()
            for pack in snapshot.content.packs.values { for v in pack.versions.values { directories.insert(v.directory) } }
            manifestCache.forget(except: directories)
            if previous != nil {
                let elapsed = ContinuousClock.now - started
                let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                logger.info(.catalogReloaded, "catalog reloaded: \(snapshot.liveProductCount) live products (\(Int(milliseconds)) ms)")
            }
            return nil
        case .failure(let problems):
            let hadSnapshot = state.withLock { s -> Bool in
                s.failure = problems
                s.fingerprint = fingerprint
                return s.snapshot != nil
            }
            let kept = hadSnapshot ? "; still serving the last good catalog" : ""
            logger.error(.catalogRefused, "catalog refused\(kept): \(problems.problems.map(\.description).joined(separator: "; "))")
            return problems
        }
    }

    /// Starts watching for changes on a background thread: inotify wakes it as soon as a file in the catalog
    /// directory, the content directory or a pack directory changes; without inotify (or for a change it
    /// does not see, such as a manifest edited in place) the fingerprint is compared every `pollInterval`.
    package func startWatching() {
        let watcher = watching.withLock { current -> DirectoryWatcher in
            if let current { return current }
            let paths = paths
            // Weak: the store holds the watcher, not the other way round.
            let created = DirectoryWatcher(directories: { Self.watchedDirectories(paths) }, interval: pollInterval) { [weak self] in
                guard let self else { return }
                if currentFingerprint() != state.withLock({ $0.fingerprint }) { reload() }
            }
            current = created
            return created
        }
        // Above the rest of the process (a publish must show within 2 s even under load), and nearly always asleep.
        watcher.start(threadName: "depot-catalog-watch", priority: .elevated)
    }

    /// The catalog and content directories and every pack directory.
    static func watchedDirectories(_ paths: DepotPaths) -> [String] {
        var directories = [paths.catalogDirectory, paths.contentDirectory]
        for pack in (try? FileManager.default.contentsOfDirectory(atPath: paths.contentDirectory)) ?? [] where !pack.hasPrefix(".") {
            directories.append(paths.contentDirectory + "/" + pack)
        }
        return directories
    }

    /// Stops watching.
    package func stopWatching() {
        let watcher = watching.withLock { current -> DirectoryWatcher? in
            defer { current = nil }
            return current
        }
        watcher?.stop()
    }

    /// Identity of every file a snapshot depends on, without reading their contents.
    func currentFingerprint() -> String {
        var parts: [String] = []
        parts.append(FileStatus.identity(paths.productsFile) ?? "-")
        parts.append(FileStatus.identity(paths.listRecordFile) ?? "-")
        let packs = ((try? FileManager.default.contentsOfDirectory(atPath: paths.contentDirectory)) ?? []).sorted()
        for pack in packs where !pack.hasPrefix(".") {
            let directory = paths.contentDirectory + "/" + pack
            parts.append(pack)
            parts.append(FileStatus.identity(directory + "/current") ?? "-")
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            for version in versions where Identifiers.parseVersion(version) != nil {
                parts.append(version + "=" + (FileStatus.identity(directory + "/" + version + "/manifest.json") ?? "-"))
            }
        }
        return parts.joined(separator: "|")
    }
}
