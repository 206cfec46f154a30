/// `GET /admin/v1/traffic`: the server's recent traffic as per-minute buckets (oldest first, at most a day), the
/// counters since start (the same totals `/metrics` shows) and the disk figures, for the console's charts.
public struct TrafficReport: Sendable, Hashable, Codable {
    /// One minute's (or, for `current`, the minute so far's) counts.
    public struct Bucket: Sendable, Hashable, Codable {
        /// The minute's start, RFC 3339 UTC.
        public var start: String
        public var counts: TrafficCounts

        public init(start: String, counts: TrafficCounts) {
            self.start = start
            self.counts = counts
        }
    }

    /// Free space of the content and data volumes, and the reserve publishing keeps free on the content volume.
    public struct Disk: Sendable, Hashable, Codable {
        public var contentFreeBytes: Int64
        public var contentTotalBytes: Int64
        public var contentReserveBytes: Int64
        public var dataFreeBytes: Int64

        public init(contentFreeBytes: Int64, contentTotalBytes: Int64, contentReserveBytes: Int64, dataFreeBytes: Int64) {
            self.contentFreeBytes = contentFreeBytes
            self.contentTotalBytes = contentTotalBytes
            self.contentReserveBytes = contentReserveBytes
            self.dataFreeBytes = dataFreeBytes
        }
    }

    /// When the report was made, RFC 3339 UTC.
    public var now: String
    /// Since the server started; equal to the sums of the matching `/metrics` counters.
    public var totals: TrafficCounts
    /// Complete minutes, oldest first (at most 1,440).
    public var minutes: [Bucket]
    /// The minute under way.
    public var current: Bucket
    public var disk: Disk

    public init(now: String, totals: TrafficCounts, minutes: [Bucket], current: Bucket, disk: Disk) {
        self.now = now
        self.totals = totals
        self.minutes = minutes
        self.current = current
        self.disk = disk
    }
}

/// Counts over some span of time, from the counters behind `/metrics`.
public struct TrafficCounts: Sendable, Hashable, Codable {
    /// One outcome of the calls to Apple (`ok`, `timeout`, ...) and how many calls had it.
    public struct Outcome: Sendable, Hashable, Codable {
        public var outcome: String
        public var count: Int64

        public init(outcome: String, count: Int64) {
            self.outcome = outcome
            self.count = count
        }
    }

    /// Every HTTP request answered (`depot_http_requests_total`).
    public var requests: Int64
    /// Pack file requests answered `200` or `206`.
    public var downloads: Int64
    /// Response body bytes, every route (`depot_http_response_bytes_total`).
    public var bytesSent: Int64
    /// Response body bytes of pack files.
    public var packBytes: Int64
    /// Product list requests, and those answered `304 Not Modified`.
    public var listRequests: Int64
    public var listNotModified: Int64
    /// Calls to Apple by outcome, sorted by outcome: `verifyReceipt`'s as in `depot_apple_requests_total`, the App
    /// Store Server API's as `api <outcome>` summed over endpoints (`depot_apple_api_requests_total`).
    public var apple: [Outcome]

    public init(requests: Int64 = 0, downloads: Int64 = 0, bytesSent: Int64 = 0, packBytes: Int64 = 0, listRequests: Int64 = 0,
                listNotModified: Int64 = 0, apple: [Outcome] = []) {
        self.requests = requests
        self.downloads = downloads
        self.bytesSent = bytesSent
        self.packBytes = packBytes
        self.listRequests = listRequests
        self.listNotModified = listNotModified
        self.apple = apple
    }

    /// `self − earlier`, per counter (outcomes that `earlier` lacks count from zero).
    public func subtracting(_ earlier: TrafficCounts) -> TrafficCounts {
        let before = Dictionary(earlier.apple.map { ($0.outcome, $0.count) }, uniquingKeysWith: +)
        return TrafficCounts(requests: requests - earlier.requests, downloads: downloads - earlier.downloads,
                             bytesSent: bytesSent - earlier.bytesSent, packBytes: packBytes - earlier.packBytes,
                             listRequests: listRequests - earlier.listRequests, listNotModified: listNotModified - earlier.listNotModified,
                             apple: apple.map { Outcome(outcome: $0.outcome, count: $0.count - (before[$0.outcome] ?? 0)) }.filter { $0.count != 0 })
    }
}
