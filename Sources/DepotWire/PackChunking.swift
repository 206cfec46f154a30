/// How a version's files were cut into chunks (`"chunking"` in the manifest, `pack-updates.md` §1).
///
/// `content`: content-defined boundaries between `min` and `max` bytes around an `average` (a gear hash,
/// FastCDC-style with normalized chunking; the README gives the algorithm and its constants). `fixed`: every
/// chunk `size` bytes except a file's last. A manifest without the field (published before it existed) is
/// fixed chunking at its `chunkSize`.
public enum PackChunking: Sendable, Hashable, Codable {
    case content(min: Int64, average: Int64, max: Int64)
    case fixed(size: Int64)

    /// The largest length a chunk may have: the manifest's `chunkSize`.
    public var largestChunk: Int64 {
        switch self {
        case .content(_, _, let max): max
        case .fixed(let size): size
        }
    }

    /// `"content"` or `"fixed"`.
    public var method: String {
        switch self {
        case .content: "content"
        case .fixed: "fixed"
        }
    }

    private enum CodingKeys: String, CodingKey { case method, min, average, max, size }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .method) {
        case "content":
            self = .content(min: try container.decode(Int64.self, forKey: .min), average: try container.decode(Int64.self, forKey: .average),
                            max: try container.decode(Int64.self, forKey: .max))
        case "fixed":
            self = .fixed(size: try container.decode(Int64.self, forKey: .size))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .method, in: container, debugDescription: "unknown chunking method \"\(other)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        switch self {
        case .content(let min, let average, let max):
            try container.encode(min, forKey: .min)
            try container.encode(average, forKey: .average)
            try container.encode(max, forKey: .max)
        case .fixed(let size):
            try container.encode(size, forKey: .size)
        }
    }
}
