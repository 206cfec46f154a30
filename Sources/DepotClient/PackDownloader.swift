import DepotWire
public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads one content pack into a directory, chunk by chunk, verified and resumable — the Depot
/// counterpart of StoreKit's `SKDownload` (``progress``, ``PackDownloadProgress/timeRemaining``,
/// ``pause()``, ``resume()``, ``cancel()``).
///
/// What a run of ``start()`` does (spec §4.4, §6):
/// 1. fetches the manifest (`GET /v1/packs/{pack}/manifest`, following the `307` to the live version) with
///    the token as `Authorization: Bearer`, and refuses unsafe paths (`..`, absolute, backslash) before
///    writing anything;
/// 2. picks up the journal `<destination>/.depot-download.json` left by an earlier run or process: files
///    whose ETag is unchanged keep their verified chunks (re-hashed from disk first, see
///    ``PackDownloadOptions/verifyOnResume``), changed files start over, files gone from the pack are deleted;
/// 3. checks free space (before every range request) against the chunks it asks for plus those in flight plus a
///    reserve, and stops with ``DepotClientError/insufficientSpace(required:available:)`` — before writing
///    anything when even the first request does not fit; calling ``start()`` again once space is freed resumes;
/// 4. fetches the missing chunks, runs of adjacent ones of a file with one request each (up to
///    ``PackDownloadOptions/runBytes``; `parallelChunks` requests at a time, 4 by default, launched in manifest
///    order) with `Range: bytes=a-b` and `If-Range: <file ETag>`; checks each chunk's SHA-256 (a bad chunk is
///    fetched again alone); writes the run in place at its offset in `<destination>/<path>`; records its chunks
///    in the journal, which is saved (atomically) every 8 MiB verified or quarter second and when the fetching
///    stops (see ``DownloadJournal``). A `200` instead of `206` means the file changed: the bytes are not spliced
///    in, the manifest is fetched again and the file starts over;
/// 5. on `401 token_expired`, asks the `renewToken` closure for a fresh token and carries on;
/// 6. sets every file to its exact size, saves the installed version's manifest and marks the journal complete.
///
/// The journal (`.depot-download.json`, hidden) stays after completion, marked complete: it records which chunks
/// are verified, so running again re-checks them and fetches nothing, and a newer pack version fetches only what
/// changed. Beside it, `.depot-download.json.manifest` keeps the installed version's chunks (``InstalledManifest``), so
/// an update whose old version the server has pruned still copies what the device holds. Delete both together with
/// the pack's files (``cancel()`` does).
/// Files are complete and trustworthy only once ``start()`` returns ``PackDownloadOutcome/completed(_:)``.
///
/// ```swift
/// let downloader = PackDownloader(client: depot, entitlement: entitlement,
///                                 destination: appSupport.appendingPathComponent("packs/level2"),
///                                 renewToken: { try await depot.unlock(receipt: receipt).token(forPack: "level2") })
/// do {
///     for try await event in downloader.download() {
///         switch event {
///         case .progress(let p): print(p.progress, p.bytesPerSecond ?? 0, p.timeRemaining ?? -1)
///         case .completed(let manifest): print("installed \(manifest.files.count) files")
///         default: break                            // .paused after downloader.pause(); download() again resumes
///         }
///     }
/// } catch DepotClientError.insufficientSpace(let required, let available) {
///     // "Free \(required - available) bytes or continue later" — then call download() again.
/// }
/// ```
///
/// ``start()`` runs the same download and returns its outcome; ``events`` shows every run's events to an
/// observer in another task (at most 256 unread ones are kept; a run's end always is: see ``events``).
///
/// Concurrency: an `actor`; one run at a time (a second ``start()`` while running joins the first).
/// Chunks are 1 MiB by default; at most `parallelChunks` of them are held in memory at once.
public actor PackDownloader {
    /// The pack ID.
    public nonisolated let pack: String
    /// The directory the pack's files are written into.
    public nonisolated let destination: URL
    /// Progress and state changes of every run, buffered from creation. Ends after
    /// ``PackDownloadEvent/completed(_:)`` or ``PackDownloadEvent/cancelled``. Meant for one consumer that
    /// watches from another task while ``start()`` runs (iterating it does not start anything); to drive a
    /// download and see its events in one loop, iterate ``download()``.
    ///
    /// Bounded: at most ``PackDownloadOptions/unreadEventLimit`` events (256 by default) wait unread, so an app that
    /// never reads this stream does not keep every event of every run. When one more arrives, the oldest unread
    /// event that neither begins nor ends a run is dropped (`.progress`, whose later ones carry the same figures
    /// brought up to date, `.chunkRejected`, `.fileRestarted`, `.tokenRenewed`); `.updating`, `.started`, `.paused`,
    /// `.insufficientSpace`, `.failed`, `.completed` and `.cancelled` are dropped only when nothing else is unread,
    /// oldest first. The newest event is always kept: a reader, however late, sees how the latest run ended (and
    /// how every earlier one did, unless more than the limit of such events are unread). A reader that keeps up
    /// misses nothing.
    public nonisolated let events: AsyncStream<PackDownloadEvent>

    /// The token in use (renewals replace it).
    public internal(set) var token: String
    public internal(set) var state: PackDownloadState = .idle
    public internal(set) var progress = PackDownloadProgress(completedBytes: 0, totalBytes: 0, bytesPerSecond: nil,
                                                             currentPath: nil)
    /// The manifest of the last run.
    public internal(set) var manifest: DownloadManifest?
    /// The error that stopped the last run.
    public internal(set) var lastError: DepotClientError?

    /// What ``events`` delivers: the unread events, bounded.
    let unreadEvents: PackDownloadEventBuffer
    let transport: DepotTransport
    let clock: DepotClock
    let options: PackDownloadOptions
    let manifestPath: String
    let renewToken: (@Sendable () async throws -> String)?
    /// Where every file operation of this downloader runs, in order, off the cooperative threads.
    let fileWork = FileWorkQueue()
    /// The token renewal under way, which chunks in flight wait for instead of starting their own.
    var renewal: Task<String, any Error>?
    /// The streams of ``download()`` callers, fed while their run lasts.
    var subscribers: [Int: AsyncThrowingStream<PackDownloadEvent, any Error>.Continuation] = [:]
    var nextSubscriber = 0

    /// Where the version being downloaded is written: the destination, or during an update the directory
    /// beside it (``updateDirectory``).
    var store: PackFileStore
    /// The installed version an update copies from (nil: a plain download into the destination).
    var updateFrom: Int?
    /// Chunks whose copy from the installed version failed its SHA-256 check this run: fetched instead.
    var rejectedCopies: Set<String> = []
    /// The chunks of the installed version `from` as its saved manifest lists them (nil: no usable one), loaded once
    /// for an update the server has no delta for.
    var localReuse: (from: Int, index: InstalledManifest.Index?)?

    var journal: DownloadJournal?
    var journalLoaded = false
    var rate: TransferRate
    var rateMark: TimeInterval = 0
    var stopRequest: StopRequest?
    private var current: (id: Int, task: Task<PackDownloadOutcome, any Error>)?
    private var runs = 0

    enum StopRequest { case pause, cancel }

    /// A downloader for `pack` into `destination`.
    ///
    /// - Parameters:
    ///   - token: the download token from ``Entitlement/token``.
    ///   - manifestPath: defaults to `/v1/packs/{pack}/manifest` (the live version).
    ///   - renewToken: called on `401 token_expired`; returns a fresh token (typically by validating the
    ///     receipt again). Without it, an expired token fails the run with ``DepotClientError/tokenExpired``.
    public init(client: DepotClient, pack: String, token: String, destination: URL, manifestPath: String? = nil,
                options: PackDownloadOptions = PackDownloadOptions(),
                renewToken: (@Sendable () async throws -> String)? = nil) {
        self.pack = pack
        self.destination = destination
        self.token = token
        self.transport = client.transport
        self.clock = client.clock
        self.options = options
        self.renewToken = renewToken
        self.manifestPath = manifestPath ?? WirePath.packManifest(pack: pack)
        store = PackFileStore(root: destination, journalName: PackDownloadOptions.journalFileName)
        rate = TransferRate(timeConstant: options.rateTimeConstant)
        let unread = PackDownloadEventBuffer(limit: options.unreadEventLimit)
        unreadEvents = unread
        events = AsyncStream(unfolding: { await unread.next() })
    }

    /// A downloader for the pack an ``Entitlement`` released (its pack, token and manifest path).
    public init(client: DepotClient, entitlement: Entitlement, destination: URL,
                options: PackDownloadOptions = PackDownloadOptions(),
                renewToken: (@Sendable () async throws -> String)? = nil) {
        self.init(client: client, pack: entitlement.pack, token: entitlement.token, destination: destination,
                  manifestPath: entitlement.manifest, options: options, renewToken: renewToken)
    }

    /// Events of ``events`` emitted and not read yet (at most ``PackDownloadOptions/unreadEventLimit``).
    package nonisolated var unreadEventCount: Int { unreadEvents.count }

    // MARK: - Control

    /// Runs the download until every file is in place, ``pause()`` is called, or an error stops it.
    ///
    /// Calling it again after a pause or an error resumes from the verified chunks (also after a relaunch:
    /// the journal is on disk). While a run is active, a second call waits for the same run. Cancelling the
    /// calling task stops the run like ``pause()`` and throws `CancellationError`.
    ///
    /// - Throws: ``DepotClientError``; notably `.insufficientSpace` (free space, then call again),
    ///   `.retryLater`, `.transport` (offline), `.tokenExpired`, `.revoked`, `.cancelled`.
    public func start() async throws -> PackDownloadOutcome {
        switch state {
        case .cancelled: throw DepotClientError.cancelled
        case .completed: if let manifest { return .completed(manifest) }
        default: break
        }
        let task: Task<PackDownloadOutcome, any Error>
        if let current {
            task = current.task
        } else {
            runs += 1
            let id = runs
            stopRequest = nil
            state = .active
            task = Task { try await self.perform(run: id) }
            current = (id, task)
        }
        return try await withTaskCancellationHandler {
            let outcome = try await task.value
            // The caller's task was cancelled: the run stopped like a pause; say so the way Swift does.
            if Task.isCancelled, case .paused = outcome { throw CancellationError() }
            return outcome
        } onCancel: {
            // Stop like pause(): the request in flight is not cancelled (see pause()).
            Task { await self.pause() }
        }
    }

    /// Same as ``start()``: continues a paused (or stopped) download.
    public func resume() async throws -> PackDownloadOutcome {
        try await start()
    }

    /// Stops the active run after the chunks in flight (at most `parallelChunks` chunks are still
    /// fetched and verified); ``start()`` returns ``PackDownloadOutcome/paused``. Verified chunks stay on
    /// disk and in the journal. Requests in flight are not cancelled: cancelling URLSession tasks races
    /// inside swift-corelibs-foundation on Linux, and finishing a few chunks costs little.
    public func pause() {
        guard current != nil, state == .active, stopRequest == nil else { return }
        stopRequest = .pause
    }

    /// Stops the download and deletes what it wrote: the pack's files in the destination (and directories
    /// left empty) and the journal. The downloader is finished afterwards. Does nothing once completed.
    public func cancel() async {
        switch state {
        case .cancelled, .completed: return
        default: break
        }
        state = .cancelled
        stopRequest = .cancel
        if let current {
            // The run stops after the chunks in flight (their requests are not cancelled; see pause()).
            _ = try? await current.task.value
        }
        await removeDownloadedFiles()
        emit(.cancelled)
        unreadEvents.finish()
    }

    // MARK: - Run

    private func perform(run id: Int) async throws -> PackDownloadOutcome {
        defer { if current?.id == id { current = nil } }
        lastError = nil
        do {
            let manifest = try await runOnce()
            // A cancel that came while the last chunks were in flight wins: cancel() deletes the files next.
            if stopRequest == .cancel { throw DepotClientError.cancelled }
            state = .completed
            emit(.completed(manifest))
            unreadEvents.finish()
            return .completed(manifest)
        } catch {
            if stopRequest == .cancel { throw DepotClientError.cancelled }
            if stopRequest == .pause || error is CancellationError {
                let paused = stopRequest == .pause
                stopRequest = nil
                state = .paused
                emit(.paused)
                if paused { return .paused }
                throw CancellationError()
            }
            let failure = error as? DepotClientError ?? .invalidResponse("\(error)")
            lastError = failure
            if case .insufficientSpace(let required, let available) = failure {
                state = .waitingForSpace(required: required, available: available)
                emit(.insufficientSpace(required: required, available: available))
            } else {
                state = .failed
                emit(.failed(failure))
            }
            throw failure
        }
    }

    /// One run: manifest, journal, chunks, final sizes.
    ///
    /// When the destination holds a complete older version, this is an update (`pack-updates.md` §2): the new
    /// version is assembled beside it from copied and fetched chunks, then switched in (``PackDownloader+Update``).
    private func runOnce() async throws -> DownloadManifest {
        var manifest = try await prepareUpdate(live: try await fetchManifest())
        try await adopt(manifest)
        progress.reusedBytes = 0
        progress.fetchedBytes = 0
        if let from = updateFrom {
            emit(.updating(from: from, reuseBytes: manifest.delta?.summary?.reuseBytes ?? 0,
                           fetchBytes: manifest.delta?.summary?.fetchBytes ?? manifest.downloadBytes))
            try checkUpdateSpace(manifest)
        }
        emit(.started(manifest, resumedBytes: progress.completedBytes))
        rateMark = clock.uptime()
        var restarts = 0
        while true {
            try await copyReusableChunks(of: manifest)
            guard let (file, answer) = try await fetchMissingChunks(of: manifest) else { break }
            // The file changed under us (or its version was pruned): never splice; refresh the manifest.
            restarts += 1
            guard restarts <= options.restartLimit else { throw DepotClientError.contentChanged(path: file.path) }
            let refreshed = try await refreshManifest()
            if refreshed.files.first(where: { $0.path == file.path })?.etag == file.etag {
                if case .gone = answer {
                    // Same bytes under the live version's URL keep their chunks; same version: really missing.
                    if refreshed.version == manifest.version {
                        throw DepotClientError.notFound(code: nil, message: "\(file.path) is in the manifest but not served")
                    }
                } else {
                    // The server sent other bytes while the manifest still vouches for the old ones:
                    // start the file over anyway.
                    journal?.files[file.path]?.verified = []
                    try await fileWork.run { [store] in store.remove(file.path) }
                    emit(.fileRestarted(path: file.path))
                }
            }
            manifest = refreshed
            try await adopt(manifest)
        }
        let sizes = manifest.files.map { ($0.path, $0.size) }
        // The installed version's manifest goes beside the journal before the journal says complete: a later update
        // computes its reuse from it when the server no longer has this version (``InstalledManifest``).
        let installed = InstalledManifest(manifest)
        try await fileWork.run { [store] in
            for (path, size) in sizes { try store.setSize(path, size) }
            try store.saveInstalledManifest(installed)
        }
        journal?.completed = true
        try await saveJournal()
        progress.currentPath = nil
        if updateFrom != nil { try await switchToUpdate() }
        return manifest
    }

    func emit(_ event: PackDownloadEvent) {
        unreadEvents.append(event)
        for subscriber in subscribers.values { subscriber.yield(event) }
    }
}
