import Server
package import DepotWire
package import Foundation
package import Ledger
import Synchronization

/// Gathers what pack responses actually wrote (spec app-store-server-api §7) and writes it to the ledger's
/// delivery record in batches.
///
/// - Hot path: `record(loop:_:)` appends to the calling loop's own buffer, which only that loop's thread
///   touches: no lock, no allocation beyond the array's growth, no I/O.
/// - Once a second (`interval`), a job on each loop hands its buffer over (`onEachLoop`), and the ticker, a
///   task off the loops, merges the pieces into byte ranges per purchase and file: what waits is bounded by
///   the files being downloaded, not by the responses. The hand-over goes on while a write is slow (a
///   PostgreSQL failover can hold one for 15–20 s).
/// - A writer (one at a time) looks up the files' chunks in the version's manifest and writes everything
///   merged so far in one ledger call: at most one write per purchase per second. A failed write keeps the
///   merged ranges for the next round. At most `maximumPendingFiles` purchase files wait, each with at most
///   `maximumPendingRanges` separate ranges (scattered pieces from a hostile client cost bounded memory and
///   merge time); pieces beyond either are dropped and counted (`droppedPieceCount`, `/metrics`) with a warning.
/// - `stop()`, after the server stopped (so no loop touches its buffer any more), writes what is left: the
///   record is flushed on `SIGTERM`.
package final class DeliveryRecorder: Sendable {
    /// Bytes of one file written to one purchase's token.
    package struct Piece: Sendable, Equatable {
        var originalTransactionID: String
        var pack: String
        var version: Int
        var path: String
        var range: Range<Int64>

        /// `range` of `path` in version `version` of `pack`, written to `originalTransactionID`'s token.
        package init(originalTransactionID: String, pack: String, version: Int, path: String, range: Range<Int64>) {
            self.originalTransactionID = originalTransactionID
            self.pack = pack
            self.version = version
            self.path = path
            self.range = range
        }
    }

    /// One loop's buffer; read and written only on that loop's thread (or after the loops stopped).
    final class LoopBuffer: @unchecked Sendable {
        var pieces: [Piece] = []

        func take() -> [Piece] {
            defer { pieces = [] }
            return pieces
        }
    }

    /// One purchase's file.
    struct FileKey: Hashable, Sendable {
        let original: String, pack: String, version: Int, path: String
    }

    /// What waits for the next write, merged.
    private struct Pending {
        var files: [FileKey: ByteCoverage] = [:]
        var order: [FileKey] = []
        var dropped: UInt64 = 0
    }

    /// The most purchase files waiting for a write at once.
    package static let maximumPendingFiles = 100_000

    private let buffers: [LoopBuffer]
    private let ledger: Ledger
    private let manifest: @Sendable (String, Int) -> PackManifest?
    private let logger: Logger
    private let interval: Duration
    private let now: @Sendable () -> Date
    private let maximumFiles: Int
    private let maximumRanges: Int
    private let handedOver = Mutex<[Piece]>([])
    private let pending = Mutex(Pending())
    private let ticking = Mutex<Task<Void, Never>?>(nil)
    private let writing = Mutex<Task<Void, Never>?>(nil)
    private let progressHandler: @Sendable ([DeliveryProgress]) async -> Void
    private let writes = Atomic<Int>(0)

    /// A recorder for `loops` event loops; `manifest(pack, version)` gives a version's manifest (nil when
    /// it is gone); `onProgress` hears the chunks each write newly delivered.
    package init(loops: Int, ledger: Ledger, logger: Logger, interval: Duration = .seconds(1),
         maximumPendingFiles: Int = maximumPendingFiles, maximumPendingRanges: Int = 4 * ByteCoverage.maximumRanges,
         now: @escaping @Sendable () -> Date = { Date() },
         manifest: @escaping @Sendable (String, Int) -> PackManifest?,
         onProgress: @escaping @Sendable ([DeliveryProgress]) async -> Void = { _ in }) {
        buffers = (0..<max(1, loops)).map { _ in LoopBuffer() }
        self.ledger = ledger
        self.logger = logger
        self.interval = interval
        self.now = now
        self.manifest = manifest
        maximumFiles = max(1, maximumPendingFiles)
        maximumRanges = max(1, maximumPendingRanges)
        progressHandler = onProgress
    }

    /// Notes that `piece` was written. Call on loop `loop`'s own thread.
    package func record(loop: Int, _ piece: Piece) {
        guard !piece.range.isEmpty else { return }
        buffers[loop % buffers.count].pieces.append(piece)
    }

    /// Starts the ticker; `onEachLoop` runs a job on every loop's own thread (the server's).
    package func start(onEachLoop: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> Void) {
        let buffers = buffers
        let task = Task(executorPreference: WorkerPool.shared) { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                onEachLoop { [self] loop in
                    let pieces = buffers[loop % buffers.count].take()
                    if !pieces.isEmpty { handedOver.withLock { $0 += pieces } }
                }
                // The jobs run at the loops' next turn: let them, then merge what arrived and write it.
                try? await Task.sleep(for: .milliseconds(50))
                mergeHandedOver()
                startWriteUnlessWriting()
            }
        }
        ticking.withLock { $0 = task }
    }

    /// Stops the ticker, waits for a write in flight, and writes everything gathered. Call once the loops
    /// have stopped.
    package func stop() async {
        if let task = ticking.withLock({ $0.take() }) {
            task.cancel()
            await task.value
        }
        if let write = writing.withLock({ $0 }) { await write.value }
        let rest = buffers.flatMap { $0.take() }
        handedOver.withLock { $0 += rest }
        mergeHandedOver()
        await writePending()
    }

    /// Ranges waiting for the next write (tests).
    package var pendingPieceCount: Int {
        handedOver.withLock { $0.count } + pending.withLock { $0.files.values.reduce(0) { $0 + $1.ranges.count } }
    }

    /// Pieces dropped because too many purchase files were waiting for the ledger.
    package var droppedPieceCount: UInt64 { pending.withLock { $0.dropped } }

    /// Ledger writes made so far (tests).
    package var writeCount: Int { writes.load(ordering: .relaxed) }

    /// Starts a write of what is pending unless one is running (a slow ledger: what arrives meanwhile waits merged).
    private func startWriteUnlessWriting() {
        writing.withLock { current in
            guard current == nil else { return }
            current = Task(executorPreference: WorkerPool.shared) { [self] in
                await writePending()
                writing.withLock { $0 = nil }
            }
        }
    }

    /// Merges the pieces handed over into what waits (off the loops).
    private func mergeHandedOver() {
        let pieces = handedOver.withLock { handed -> [Piece] in
            defer { handed = [] }
            return handed
        }
        guard !pieces.isEmpty else { return }
        let dropped = pending.withLock { pending in
            let before = pending.dropped
            for piece in pieces {
                let key = FileKey(original: piece.originalTransactionID, pack: piece.pack, version: piece.version, path: piece.path)
                if pending.files[key] == nil {
                    guard pending.order.count < maximumFiles else {
                        pending.dropped += 1
                        continue
                    }
                    pending.order.append(key)
                }
                if let coverage = pending.files[key], coverage.ranges.count >= maximumRanges, !coverage.covers(piece.range) {
                    pending.dropped += 1
                    continue
                }
                pending.files[key, default: ByteCoverage()].insert(piece.range)
            }
            return pending.dropped - before
        }
        if dropped > 0 {
            logger.warning(.deliveryRecord, "delivery record: dropped \(dropped) piece(s): at most \(maximumFiles) purchase files of \(maximumRanges) separate ranges each wait for the ledger")
        }
    }

    /// Writes everything merged so far (kept for the next round if the write fails).
    package func writePending() async {
        mergeHandedOver()
        let (files, order) = pending.withLock { pending -> ([FileKey: ByteCoverage], [FileKey]) in
            defer {
                pending.files = [:]
                pending.order = []
            }
            return (pending.files, pending.order)
        }
        guard !order.isEmpty else { return }
        let spans = spans(of: files, order: order)
        guard !spans.isEmpty else { return }
        do {
            let progress = try await ledger.recordDeliveries(spans)
            writes.add(1, ordering: .relaxed)
            if !progress.isEmpty { await progressHandler(progress) }
        } catch {
            logger.warning(.deliveryRecord, "delivery record: cannot write \(spans.count) file record(s), keeping them for the next round: \(error)")
            // Kept merged and trimmed (at most ByteCoverage.maximumRanges ranges a purchase's file, those covering
            // a chunk kept first), merged with what arrived meanwhile.
            pending.withLock { pending in
                for span in spans {
                    let key = FileKey(original: span.originalTransactionID, pack: span.pack, version: span.version, path: span.path)
                    var coverage = span.sent
                    if let arrived = pending.files[key] { coverage.formUnion(arrived) } else { pending.order.append(key) }
                    coverage.trim(keeping: span.chunks)
                    pending.files[key] = coverage
                }
            }
        }
    }

    /// The merged files with their chunks and their version's totals (files no manifest knows are dropped), in
    /// the order they first arrived.
    private func spans(of files: [FileKey: ByteCoverage], order: [FileKey]) -> [DeliverySpan] {
        let sentAt = now()
        var manifests: [String: PackManifest?] = [:]
        var totals: [String: VersionTotals] = [:]
        return order.compactMap { key in
            let id = "\(key.pack)/\(key.version)"
            if manifests[id] == nil { manifests[id] = .some(manifest(key.pack, key.version)) }
            guard let manifest = manifests[id] ?? nil, let file = manifest.files.first(where: { $0.path == key.path }),
                  let sent = files[key] else { return nil }
            if totals[id] == nil { totals[id] = Self.totals(of: manifest) }
            return DeliverySpan(originalTransactionID: key.original, pack: key.pack, version: key.version, path: key.path,
                                sent: sent, chunks: file.chunks.map { $0.offset..<($0.offset + $0.length) }, sentAt: sentAt,
                                versionTotals: totals[id])
        }
    }

    /// A version's chunks and their bytes, from its manifest.
    static func totals(of manifest: PackManifest) -> VersionTotals {
        let chunks = manifest.files.flatMap(\.chunks)
        return VersionTotals(chunks: chunks.count, bytes: chunks.reduce(0) { $0 + $1.length })
    }
}
