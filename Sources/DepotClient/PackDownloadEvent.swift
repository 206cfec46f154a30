import Foundation

/// What a ``PackDownloader`` reports on its ``PackDownloader/events`` stream.
public enum PackDownloadEvent: Sendable {
    /// The destination holds complete version `from`: this run updates it, copying `reuseBytes` from its files and
    /// fetching `fetchBytes` (the server's figures), beside it until the switch. Comes before ``started(_:resumedBytes:)``.
    case updating(from: Int, reuseBytes: Int64, fetchBytes: Int64)
    /// A run began with this manifest; `resumedBytes` were already on disk and verified.
    case started(DownloadManifest, resumedBytes: Int64)
    /// Chunks were verified and written: after each range request's run of chunks (``PackDownloadOptions/runBytes``,
    /// a single chunk when it is 1) and after each chunk copied during an update.
    case progress(PackDownloadProgress)
    /// A chunk failed its SHA-256 check (from the server, or on disk when resuming) and will be fetched again.
    case chunkRejected(path: String, chunk: Int)
    /// The file's ETag changed (new version, or `200` to an `If-Range`): it starts over from its first byte.
    case fileRestarted(path: String)
    /// The token expired and the renewal closure supplied a fresh one.
    case tokenRenewed
    /// Not enough free space for the next chunk: free space, then call `start()` again.
    case insufficientSpace(required: Int64, available: Int64)
    /// The run stopped on `pause()`; `start()` or `resume()` continues.
    case paused
    /// Every file is on disk and verified. The stream ends.
    case completed(DownloadManifest)
    /// The run stopped on an error; `start()` retries from where it stopped.
    case failed(DepotClientError)
    /// `cancel()` removed the partial files. The stream ends.
    case cancelled
}

/// How a run of ``PackDownloader/start()`` ended without an error.
public enum PackDownloadOutcome: Sendable {
    /// Every file is in place and verified.
    case completed(DownloadManifest)
    /// `pause()` stopped it; progress is kept (on disk too).
    case paused
}

/// Where a ``PackDownloader`` stands, like `SKDownload.state`.
public enum PackDownloadState: Sendable, Equatable {
    /// Not started.
    case idle
    case active
    case paused
    /// Stopped on ``DepotClientError/insufficientSpace(required:available:)``.
    case waitingForSpace(required: Int64, available: Int64)
    /// Stopped on another error (see ``PackDownloader/lastError``).
    case failed
    case completed
    case cancelled
}
