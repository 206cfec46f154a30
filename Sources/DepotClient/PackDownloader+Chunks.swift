import DepotWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetching chunks: runs of adjacent missing chunks of a file go out as one range request each
/// (`pack-updates.md` §1), every chunk verified as the run arrives, `parallelChunks` runs in flight.
extension PackDownloader {
    /// Adjacent missing chunks of one file, fetched with one request.
    struct ChunkRun: Sendable {
        let file: DownloadManifest.File
        let indices: Range<Int>

        var bytes: Int64 { file.chunks[indices].reduce(0) { $0 + $1.length } }
        var first: Int64 { file.chunks[indices.lowerBound].offset }
        var last: Int64 { file.chunks[indices.upperBound - 1].lastByte }
    }

    /// What one run request produced.
    enum RunAnswer: Sendable {
        /// Verified chunks: index and bytes (a slice of the response). `whole` is the run's bytes in one piece when
        /// every chunk came from the one response (written with one write).
        case verified([(index: Int, bytes: Data)], whole: Data?)
        /// The file is not the one the manifest describes any more, or is gone: see ``ChunkAnswer``.
        case stopped(ChunkAnswer)
    }

    /// What one run request ended with.
    private struct RunResult: Sendable {
        let run: ChunkRun
        let outcome: Result<RunAnswer, any Error>
    }

    /// Fetches every missing chunk of `manifest` in manifest order, up to `options.parallelChunks` runs at once.
    /// Returns nil when all are verified, or the first file found changed (after the requests in flight finish:
    /// they are never cancelled, and what they verified is kept). Pause, errors and cancellation also stop
    /// launching and let the requests in flight finish first.
    func fetchMissingChunks(of manifest: DownloadManifest) async throws -> (DownloadManifest.File, ChunkAnswer)? {
        let runs = missingRuns(in: manifest)
        var next = 0
        var changed: (DownloadManifest.File, ChunkAnswer)?
        var failure: (any Error)?
        var pendingBytes: Int64 = 0
        var unsavedBytes: Int64 = 0
        var lastSave = clock.uptime()
        await withTaskGroup(of: RunResult.self) { group in
            var inFlight = 0
            while true {
                while inFlight < options.parallelChunks, next < runs.count, changed == nil, failure == nil,
                      stopRequest == nil, !Task.isCancelled {
                    let run = runs[next]
                    do {
                        try checkSpace(for: run.bytes + pendingBytes)
                    } catch {
                        failure = error
                        break
                    }
                    next += 1
                    inFlight += 1
                    pendingBytes += run.bytes
                    group.addTask { [self] in
                        do {
                            return RunResult(run: run, outcome: .success(try await fetchRun(run)))
                        } catch {
                            return RunResult(run: run, outcome: .failure(error))
                        }
                    }
                }
                guard let result = await group.next() else { break }
                inFlight -= 1
                pendingBytes -= result.run.bytes
                switch result.outcome {
                case .success(.verified(let chunks, let whole)):
                    do {
                        let path = result.run.file.path
                        // Written off the actor and the cooperative threads (``FileWorkQueue``); chunks count as
                        // verified only once their bytes are written.
                        let writes: [(offset: Int64, bytes: Data)] = whole.map { [(result.run.first, $0)] }
                            ?? chunks.map { (result.run.file.chunks[$0.index].offset, $0.bytes) }
                        try await fileWork.run { [store] in
                            for write in writes { try store.write(write.bytes, to: path, at: write.offset) }
                        }
                        for (index, bytes) in chunks {
                            journal?.files[path]?.verified.insert(index)
                            unsavedBytes += Int64(bytes.count)
                        }
                        // The journal is saved every 8 MiB verified or quarter second, before the progress is told (a
                        // resume re-verifies what it claims anyway). By bytes, not chunks: small content-defined
                        // chunks would otherwise rewrite the whole journal every few hundred KiB.
                        if unsavedBytes >= Self.journalSaveBytes || clock.uptime() - lastSave >= 0.25 {
                            try await saveJournal()
                            unsavedBytes = 0
                            lastSave = clock.uptime()
                        }
                        // One progress event per run written, not per chunk: with small content-defined chunks an event
                        // each (a wake-up of whoever watches) cost more than the rest of the chunk's handling.
                        recordProgress(bytes: chunks.reduce(0) { $0 + Int64($1.bytes.count) }, path: path, reused: false)
                    } catch {
                        if failure == nil { failure = error }
                    }
                case .success(.stopped(let answer)):
                    if changed == nil { changed = (result.run.file, answer) }
                case .failure(let error):
                    if failure == nil { failure = error }
                }
            }
        }
        if unsavedBytes > 0 { try await saveJournal() }
        if let failure { throw failure }
        if Task.isCancelled || (stopRequest != nil && changed == nil && next < runs.count) { throw CancellationError() }
        return changed
    }

    /// Newly verified bytes after which the journal is saved (else every quarter second): 8 chunks of the
    /// fixed default (1 MiB).
    static var journalSaveBytes: Int64 { 8 << 20 }

    /// Every chunk not yet verified, in manifest order, grouped into runs of adjacent chunks of one file of at most
    /// ``PackDownloadOptions/runBytes`` (a single larger chunk is a run of its own).
    func missingRuns(in manifest: DownloadManifest) -> [ChunkRun] {
        var runs: [ChunkRun] = []
        for file in manifest.files {
            var start: Int?
            var bytes: Int64 = 0
            for index in file.chunks.indices {
                let verified = journal?.isVerified(file.path, chunk: index) ?? false
                let length = file.chunks[index].length
                if let open = start, verified || bytes + length > options.runBytes {
                    runs.append(ChunkRun(file: file, indices: open..<index))
                    start = nil
                }
                if verified { continue }
                if start == nil {
                    start = index
                    bytes = 0
                }
                bytes += length
            }
            if let open = start { runs.append(ChunkRun(file: file, indices: open..<file.chunks.count)) }
        }
        return runs
    }

    /// Fetches a run with one `Range` request (`If-Range` with the file's ETag) and checks every chunk of it; a
    /// chunk that fails its SHA-256 check (or that a short answer left out) is fetched again alone.
    func fetchRun(_ run: ChunkRun) async throws -> RunAnswer {
        if run.indices.count == 1 {
            switch try await fetchChunk(run.file, index: run.indices.lowerBound) {
            case .bytes(let data): return .verified([(run.indices.lowerBound, data)], whole: data)
            case let other: return .stopped(other)
            }
        }
        let file = run.file
        let answer = try await authorized { token in
            var request = try transport.request(file.url, token: token)
            request.setValue("bytes=\(run.first)-\(run.last)", forHTTPHeaderField: "Range")
            request.setValue(file.etag, forHTTPHeaderField: "If-Range")
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            return request
        }
        let body: Data
        let bodyStart: Int64
        switch answer.status {
        case 206:
            if let field = answer.field("Content-Range") {
                guard let range = ContentRange(field) else { throw DepotClientError.invalidResponse("Content-Range \(field)") }
                if range.completeLength != nil, range.completeLength != file.size { return .stopped(.changed) }
                guard range.first == run.first, range.last == run.last else {
                    throw DepotClientError.invalidResponse("asked for bytes \(run.first)-\(run.last), got \(field)")
                }
            }
            body = answer.body
            bodyStart = run.first
        case 200:
            guard answer.field("ETag") == file.etag, answer.body.count == Int(file.size) else { return .stopped(.changed) }
            body = answer.body
            bodyStart = 0
        case 404:
            return .stopped(.gone)
        case 412, 416:
            return .stopped(.changed)
        default:
            throw transport.error(for: answer)
        }
        let matched = try await Self.verify(run.indices, of: file.chunks, in: body, from: bodyStart, with: options.hasher)
        var verified: [(index: Int, bytes: Data)] = []
        var whole = true
        for (index, good) in zip(run.indices, matched) {
            let chunk = file.chunks[index]
            let from = body.startIndex + Int(chunk.offset - bodyStart)
            let to = from + Int(chunk.length)
            if good {
                verified.append((index, body[from..<to]))
                continue
            }
            // Bytes that came and did not match are reported; a short answer's missing chunks are simply fetched.
            if to <= body.endIndex { emit(.chunkRejected(path: file.path, chunk: index)) }
            whole = false
            switch try await fetchChunk(file, index: index) {
            case .bytes(let data): verified.append((index, data))
            case let other: return .stopped(other)
            }
        }
        let start = body.startIndex + Int(run.first - bodyStart)
        return .verified(verified, whole: whole ? body[start..<start + Int(run.bytes)] : nil)
    }

    /// Enough room for `length` more bytes plus the reserve, or ``DepotClientError/insufficientSpace(required:available:)``.
    func checkSpace(for length: Int64) throws {
        let available: Int64
        do {
            available = try options.freeSpace.availableBytes(for: destination)
        } catch {
            throw DepotClientError.fileSystem(path: destination.path, underlying: error)
        }
        let required = length + options.reserve.bytes(forAvailable: available)
        guard available >= required else {
            throw DepotClientError.insufficientSpace(required: required, available: available)
        }
    }

    /// Counts a verified chunk: copied from the installed version (`reused`) or fetched.
    func recordProgress(bytes: Int64, path: String, reused: Bool) {
        let now = clock.uptime()
        rate.record(bytes: bytes, seconds: now - rateMark)
        rateMark = now
        progress.completedBytes += bytes
        if reused { progress.reusedBytes += bytes } else { progress.fetchedBytes += bytes }
        progress.bytesPerSecond = rate.bytesPerSecond
        progress.currentPath = path
        emit(.progress(progress))
    }
}
