public import Foundation

/// Tuning and injected dependencies of a ``PackDownloader``.
public struct PackDownloadOptions: Sendable {
    /// Where free space is read (default: the destination volume).
    public var freeSpace: any FreeSpaceSource
    /// Space always left free on the device.
    public var reserve: SpaceReserve
    /// SHA-256 for chunk verification.
    public var hasher: any ChunkHasher
    /// When a new downloader picks up a journal left by an earlier process, hash every chunk it records
    /// again before trusting it (default `true`). The journal is written after the chunk's bytes, which are
    /// never `fsync`ed, so after a crash or power loss it may claim bytes that never reached the disk;
    /// re-hashing costs one read of what is already downloaded, once per process, and catches that as well
    /// as files edited or truncated meanwhile. With `false`, only file sizes are checked.
    public var verifyOnResume: Bool
    /// Fetches of one chunk that may fail their SHA-256 check before the run fails with
    /// ``DepotClientError/chunkCorrupted(path:chunk:)``.
    public var chunkAttempts: Int
    /// Times a run may find a file changed (ETag) and start it over before failing with
    /// ``DepotClientError/contentChanged(path:)``.
    public var restartLimit: Int
    /// Token renewals in a row for one request before giving up with ``DepotClientError/tokenExpired``.
    public var tokenRenewals: Int
    /// τ of the rate's moving average, seconds.
    public var rateTimeConstant: TimeInterval
    /// Range requests in flight at once (default 4), each for a run of adjacent chunks (``runBytes``), each chunk
    /// verified alone; more than one hides the round trip and spreads the hashing over the cores.
    /// `1` downloads strictly chunk after chunk.
    public var parallelChunks: Int
    /// Adjacent missing chunks of a file are fetched with one range request of up to this many bytes (default
    /// 4 MiB; a larger chunk is requested alone), each chunk still verified on its own as the run arrives.
    public var runBytes: Int64
    /// The most events ``PackDownloader/events`` keeps unread (default 256, at least 1); beyond that the oldest
    /// progress-like ones are dropped, never the newest (see ``PackDownloader/events``).
    public var unreadEventLimit: Int

    public init(freeSpace: any FreeSpaceSource = VolumeFreeSpace(), reserve: SpaceReserve = .standard,
                hasher: any ChunkHasher = SHA256ChunkHasher(), verifyOnResume: Bool = true, chunkAttempts: Int = 3,
                restartLimit: Int = 3, tokenRenewals: Int = 2, rateTimeConstant: TimeInterval = 5, parallelChunks: Int = 4,
                runBytes: Int64 = 4 << 20, unreadEventLimit: Int = 256) {
        self.freeSpace = freeSpace
        self.reserve = reserve
        self.hasher = hasher
        self.verifyOnResume = verifyOnResume
        self.chunkAttempts = chunkAttempts
        self.restartLimit = restartLimit
        self.tokenRenewals = tokenRenewals
        self.rateTimeConstant = rateTimeConstant
        self.parallelChunks = max(1, parallelChunks)
        self.runBytes = max(1, runBytes)
        self.unreadEventLimit = max(1, unreadEventLimit)
    }

    /// The journal's file name inside the destination.
    public static let journalFileName = ".depot-download.json"
}
