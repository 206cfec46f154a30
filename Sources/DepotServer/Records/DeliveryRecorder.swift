import Server
import DepotWire
import Foundation
import Ledger
import Synchronization

/// Gathers what pack responses actually wrote (spec app-store-server-api §7) and writes it to the ledger's
/// delivery record in batches.
///
/// - Hot path: `record(loop:_:)` appends to the calling loop's own buffer, which only that loop's thread
///   touches: no lock, no allocation beyond the array's growth, no I/O.
/// - Once a second (`interval`), a job on each loop hands its buffer over (`onEachLoop`); the flusher, a
///   task off the loops, merges the pieces per purchase and file into byte ranges, looks up the files'
///   chunks in the version's manifest, and writes them in one ledger call: at most one write per purchase per
///   second. A failed write keeps the pieces for the next round.
/// - `stop()`, after the server stopped (so no loop touches its buffer any more), writes what is left: the
///   record is flushed on `SIGTERM`.
final class DeliveryRecorder: Sendable {
    /// Bytes of one file written to one purchase's token.
    struct Piece: Sendable, Equatable {
        var originalTransactionID: String
        var pack: String
        var version: Int
        var path: String
        var range: Range<Int64>
    }

    /// One loop's buffer; read and written only on that loop's thread (or after the loops stopped).
    final class LoopBuffer: @unchecked Sendable {
        var pieces: [Piece] = []

        func take() -> [Piece] {
            defer { pieces = [] }
            return pieces
        }
    }

    private let buffers: [LoopBuffer]
    private let ledger: Ledger
    private let manifest: @Sendable (String, Int) -> PackManifest?
    private let logger: Logger
    private let interval: Duration
    private let now: @Sendable () -> Date
    private let handedOver = Mutex<[Piece]>([])
    private let flushing = Mutex<Task<Void, Never>?>(nil)
    private let progressHandler: @Sendable ([DeliveryProgress]) async -> Void
    private let writes = Atomic<Int>(0)

    /// A recorder for `loops` event loops; `manifest(pack, version)` gives a version's manifest (nil when
    /// it is gone); `onProgress` hears the chunks each write newly delivered.
    init(loops: Int, ledger: Ledger, logger: Logger, interval: Duration = .seconds(1),
         now: @escaping @Sendable () -> Date = { Date() },
         manifest: @escaping @Sendable (String, Int) -> PackManifest?,
         onProgress: @escaping @Sendable ([DeliveryProgress]) async -> Void = { _ in }) {
        buffers = (0..<max(1, loops)).map { _ in LoopBuffer() }
        self.ledger = ledger
        self.logger = logger
        self.interval = interval
        self.now = now
        self.manifest = manifest
        progressHandler = onProgress
    }

    /// Notes that `piece` was written. Call on loop `loop`'s own thread.
    func record(loop: Int, _ piece: Piece) {
        guard !piece.range.isEmpty else { return }
        buffers[loop % buffers.count].pieces.append(piece)
    }

    /// Starts the flusher; `onEachLoop` runs a job on every loop's own thread (the server's).
    func start(onEachLoop: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> Void) {
        let buffers = buffers
        let task = Task(executorPreference: WorkerPool.shared) { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                onEachLoop { [self] loop in
                    let pieces = buffers[loop % buffers.count].take()
                    if !pieces.isEmpty { handedOver.withLock { $0 += pieces } }
                }
                // The jobs run at the loops' next turn: let them, then write what arrived.
                try? await Task.sleep(for: .milliseconds(50))
                await writePending()
            }
        }
        flushing.withLock { $0 = task }
    }

    /// Stops the flusher and writes everything gathered. Call once the loops have stopped.
    func stop() async {
        if let task = flushing.withLock({ $0.take() }) {
            task.cancel()
            await task.value
        }
        let rest = buffers.flatMap { $0.take() }
        handedOver.withLock { $0 += rest }
        await writePending()
    }

    /// Pieces waiting for the next write (tests).
    var pendingPieceCount: Int { handedOver.withLock { $0.count } }

    /// Ledger writes made so far (tests).
    var writeCount: Int { writes.load(ordering: .relaxed) }

    /// Merges and writes the pieces handed over so far (kept for the next round if the write fails).
    func writePending() async {
        let pieces = handedOver.withLock { pending -> [Piece] in
            defer { pending = [] }
            return pending
        }
        guard !pieces.isEmpty else { return }
        let spans = spans(of: pieces)
        guard !spans.isEmpty else { return }
        do {
            let progress = try await ledger.recordDeliveries(spans)
            writes.add(1, ordering: .relaxed)
            if !progress.isEmpty { await progressHandler(progress) }
        } catch {
            logger.warning(.deliveryRecord, "delivery record: cannot write \(spans.count) file record(s), keeping them for the next round: \(error)")
            // Kept merged (at most ByteCoverage.maximumRanges ranges a purchase's file), not as the raw pieces:
            // while the ledger is away downloads go on, and each answer would otherwise add a piece.
            let kept = spans.flatMap { span in
                var sent = span.sent
                sent.trim(keeping: span.chunks)
                return sent.ranges.map { Piece(originalTransactionID: span.originalTransactionID, pack: span.pack,
                                             version: span.version, path: span.path, range: $0) }
            }
            handedOver.withLock { $0 = kept + $0 }
        }
    }

    /// The pieces merged per purchase and file, with the files' chunks (files no manifest knows are dropped).
    func spans(of pieces: [Piece]) -> [DeliverySpan] {
        struct FileKey: Hashable {
            let original: String, pack: String, version: Int, path: String
        }
        var merged: [FileKey: ByteCoverage] = [:]
        var order: [FileKey] = []
        for piece in pieces {
            let key = FileKey(original: piece.originalTransactionID, pack: piece.pack, version: piece.version, path: piece.path)
            if merged[key] == nil { order.append(key) }
            merged[key, default: ByteCoverage()].insert(piece.range)
        }
        let sentAt = now()
        var manifests: [String: PackManifest?] = [:]
        return order.compactMap { key in
            let id = "\(key.pack)/\(key.version)"
            if manifests[id] == nil { manifests[id] = .some(manifest(key.pack, key.version)) }
            guard let manifest = manifests[id] ?? nil, let file = manifest.files.first(where: { $0.path == key.path }) else { return nil }
            return DeliverySpan(originalTransactionID: key.original, pack: key.pack, version: key.version, path: key.path,
                                sent: merged[key] ?? ByteCoverage(),
                                chunks: file.chunks.map { $0.offset..<($0.offset + $0.length) }, sentAt: sentAt)
        }
    }
}
