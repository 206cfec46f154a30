public import Foundation

extension PackDownloader {
    /// Starts the download (or joins the run under way) and yields its events; the one call to drive a download:
    ///
    /// ```swift
    /// for try await event in downloader.download() {
    ///     if case .progress(let p) = event { print(p.progress, p.timeRemaining ?? 0) }
    /// }
    /// // Here every file is in place and verified, or pause() stopped the run (the last event was .paused).
    /// ```
    ///
    /// The stream ends after ``PackDownloadEvent/completed(_:)``, after ``PackDownloadEvent/paused`` (from
    /// ``pause()``, or because the loop stopped iterating, which pauses the run), or by throwing what stopped
    /// the run (``DepotClientError/insufficientSpace(required:available:)``, `.retryLater`, `.cancelled`, ...).
    /// Calling it again resumes, as ``start()`` does.
    public nonisolated func download() -> AsyncThrowingStream<PackDownloadEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: PackDownloadEvent.self, throwing: (any Error).self)
        Task {
            let id = await subscribe(continuation)
            do {
                _ = try await start()
                await unsubscribe(id, error: nil)
            } catch {
                await unsubscribe(id, error: error)
            }
        }
        continuation.onTermination = { termination in
            // The consumer stopped iterating (a `break`, or its task was cancelled): stop like pause().
            if case .cancelled = termination { Task { await self.pause() } }
        }
        return stream
    }

    private func subscribe(_ continuation: AsyncThrowingStream<PackDownloadEvent, any Error>.Continuation) -> Int {
        nextSubscriber += 1
        subscribers[nextSubscriber] = continuation
        return nextSubscriber
    }

    private func unsubscribe(_ id: Int, error: (any Error)?) {
        guard let continuation = subscribers.removeValue(forKey: id) else { return }
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
    }
}

extension DepotClient {
    /// A ``PackDownloader`` for the pack `entitlement` released, writing into `destination`; iterate its
    /// ``PackDownloader/download()`` to run it.
    ///
    /// - Parameter renewToken: returns a fresh token on `401 token_expired` (validate the receipt again).
    public func downloader(for entitlement: Entitlement, to destination: URL,
                           options: PackDownloadOptions = PackDownloadOptions(),
                           renewToken: (@Sendable () async throws -> String)? = nil) -> PackDownloader {
        PackDownloader(client: self, entitlement: entitlement, destination: destination, options: options,
                       renewToken: renewToken)
    }
}
