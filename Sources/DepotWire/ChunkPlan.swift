/// The disk-space-aware download plan of a manifest (spec §4.4), `"plan"` in the answer to `?available=`.
public struct ChunkPlan: Sendable, Hashable, Codable {
    /// One chunk to fetch next.
    public struct Step: Sendable, Hashable, Codable {
        public var path: String
        public var offset: Int64
        public var length: Int64

        public init(path: String, offset: Int64, length: Int64) {
            self.path = path
            self.offset = offset
            self.length = length
        }
    }

    /// The device's free space, as the client sent it.
    public var availableBytes: Int64
    /// Space kept free on the device: max(16 MiB, 2 % of `availableBytes`).
    public var reserveBytes: Int64
    /// What is still to be downloaded (`downloadBytes - have`).
    public var remainingBytes: Int64
    /// Whether everything remaining fits now.
    public var fits: Bool
    /// The longest run of whole chunks after `have` that fits, in manifest order.
    public var next: [Step]

    public init(availableBytes: Int64, reserveBytes: Int64, remainingBytes: Int64, fits: Bool, next: [Step]) {
        self.availableBytes = availableBytes
        self.reserveBytes = reserveBytes
        self.remainingBytes = remainingBytes
        self.fits = fits
        self.next = next
    }
}
