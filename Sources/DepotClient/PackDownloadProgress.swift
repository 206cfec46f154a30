public import Foundation

/// How far a pack download is, in the terms of StoreKit's `SKDownload`: ``progress`` (0...1) and
/// ``timeRemaining``, plus bytes and rate.
public struct PackDownloadProgress: Sendable, Equatable {
    /// Bytes of verified chunks on disk.
    public var completedBytes: Int64
    /// The pack's size (`downloadBytes`).
    public var totalBytes: Int64
    /// Smoothed rate, bytes per second; nil until measured.
    public var bytesPerSecond: Double?
    /// The file being downloaded, if any.
    public var currentPath: String?
    /// Bytes this run copied from the installed version (an update, `pack-updates.md` §2), each chunk verified.
    public var reusedBytes: Int64
    /// Bytes this run fetched from the server, each chunk verified.
    public var fetchedBytes: Int64

    public init(completedBytes: Int64, totalBytes: Int64, bytesPerSecond: Double?, currentPath: String?, reusedBytes: Int64 = 0,
                fetchedBytes: Int64 = 0) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.currentPath = currentPath
        self.reusedBytes = reusedBytes
        self.fetchedBytes = fetchedBytes
    }

    /// 0...1, like `SKDownload.progress` (1 for an empty pack).
    public var progress: Double {
        totalBytes > 0 ? min(1, Double(completedBytes) / Double(totalBytes)) : 1
    }

    /// Seconds left at the current rate; nil when unknown (`SKDownload` says `SKDownloadTimeRemainingUnknown`).
    public var timeRemaining: TimeInterval? {
        guard let rate = bytesPerSecond, rate > 0 else { return completedBytes >= totalBytes ? 0 : nil }
        return Double(max(0, totalBytes - completedBytes)) / rate
    }
}
