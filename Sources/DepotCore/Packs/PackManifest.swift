public import DepotWire

/// `content/<pack>/<version>/manifest.json` (spec §2.2, §4.4): the wire ``PackManifest`` as the server stores,
/// checks and serves it. Written at publish time; the server trusts it.
extension PackManifest {
    /// The default chunk size: 1 MiB.
    public static let defaultChunkSize: Int64 = 1 << 20

    /// The entity tag for a file with this SHA-256 (hex).
    public static func entityTag(forSHA256 hex: String) -> String { "\"\(hex)\"" }

    /// The download URL of a file: each path segment percent-encoded.
    public static func url(pack: String, version: Int, path: String) -> String {
        WirePath.packFile(pack: pack, version: version, path: path)
    }

    /// Chunk boundaries for a file of `size` bytes.
    public static func chunkRanges(size: Int64, chunkSize: Int64) -> [(offset: Int64, length: Int64)] {
        var result: [(Int64, Int64)] = []
        var offset: Int64 = 0
        while offset < size {
            let length = min(chunkSize, size - offset)
            result.append((offset, length))
            offset += length
        }
        return result
    }

    /// Why content-defined chunks do not tile `file`: they must run contiguously from offset 0 to its size, each
    /// between `minimum` and `maximum` bytes long (the last may be shorter). nil when they do.
    static func contentTilingProblem(_ file: File, minimum: Int64, maximum: Int64) -> String? {
        var expected: Int64 = 0
        for (i, chunk) in file.chunks.enumerated() {
            guard chunk.offset == expected else { return "are not contiguous from offset 0" }
            let last = i == file.chunks.count - 1
            guard chunk.length > 0, chunk.length <= maximum, last || chunk.length >= minimum else {
                return "chunk \(i) is \(chunk.length) bytes, outside \(minimum)...\(maximum)"
            }
            expected += chunk.length
        }
        return expected == file.size ? nil : "do not add up to the file's size"
    }

    public func file(path: String) -> File? { files.first { $0.path == path } }

    /// Publish time in seconds since 1970.
    public var publishedSeconds: Int64 { published.flatMap(Timestamp.parseRFC3339) ?? 0 }

    // MARK: - JSON

    /// The manifest as stored and served (``WireJSON``'s layout).
    public func encoded() throws -> [UInt8] {
        try WireJSON.encode(self)
    }

    /// Reads a manifest; `file` names it in the error.
    public static func decode(_ data: [UInt8], file: String) throws(CatalogProblems) -> PackManifest {
        do {
            return try WireJSON.decode(PackManifest.self, from: data)
        } catch {
            throw CatalogProblems([CatalogProblem(file: file, field: "", message: "not a valid manifest (\(Self.describe(error)))")])
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(Self.path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \(Self.path(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "bad value at \(Self.path(context.codingPath))"
        default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        var out = ""
        for key in keys {
            if let i = key.intValue { out += "[\(i)]" } else { out += out.isEmpty ? key.stringValue : ".\(key.stringValue)" }
        }
        return out
    }

    /// Every inconsistency inside the manifest itself (not against the disk): sizes, chunk tiling, totals, URLs.
    public func consistencyProblems(file: String, expectedPack: String, expectedVersion: Int) -> [CatalogProblem] {
        var problems: [CatalogProblem] = []
        func problem(_ field: String, _ message: String) { problems.append(CatalogProblem(file: file, field: field, message: message)) }
        if pack != expectedPack { problem("pack", "is \"\(pack)\" but the directory is \"\(expectedPack)\"") }
        if version != expectedVersion { problem("version", "is \(version) but the directory is \(expectedVersion)") }
        if chunkSize <= 0 { problem("chunkSize", "must be positive") }
        switch chunking {
        case .fixed(let size)? where size != chunkSize:
            problem("chunking.size", "is \(size) but chunkSize is \(chunkSize)")
        case .content(let minimum, let average, let maximum)?:
            if maximum != chunkSize { problem("chunking.max", "is \(maximum) but chunkSize is \(chunkSize)") }
            if !ContentChunker.averageRange.contains(average) || minimum != average / 4 || maximum != average * 4 {
                problem("chunking", "needs an average in \(ContentChunker.averageRange), min = average / 4 and max = average × 4")
            }
        default:
            break
        }
        if let published {
            if Timestamp.parseRFC3339(published) == nil { problem("published", "is not an RFC 3339 UTC time") }
        } else {
            problem("published", "is missing")
        }
        var total: Int64 = 0
        var seen = Set<String>()
        for (i, f) in files.enumerated() {
            let at = "files[\(i)]"
            if !Identifiers.isSafeRelativePath(f.path) { problem("\(at).path", "\"\(f.path)\" is not a safe relative path") }
            if f.path == "manifest.json" { problem("\(at).path", "the manifest cannot list itself") }
            if !seen.insert(f.path).inserted { problem("\(at).path", "\"\(f.path)\" is listed twice") }
            if f.size < 0 { problem("\(at).size", "must not be negative") }
            if f.etag != Self.entityTag(forSHA256: f.sha256) { problem("\(at).etag", "does not match the file's SHA-256") }
            if f.url != Self.url(pack: pack, version: version, path: f.path) { problem("\(at).url", "does not match the path") }
            switch effectiveChunking {
            case .fixed(let size):
                let expected = size > 0 ? Self.chunkRanges(size: f.size, chunkSize: size) : []
                if expected.count != f.chunks.count || zip(expected, f.chunks).contains(where: { $0.offset != $1.offset || $0.length != $1.length }) {
                    problem("\(at).chunks", "do not tile the file in chunks of \(size) bytes")
                }
            case .content(let minimum, _, let maximum):
                if let why = Self.contentTilingProblem(f, minimum: minimum, maximum: maximum) { problem("\(at).chunks", why) }
            }
            total += f.size
        }
        if total != downloadBytes { problem("downloadBytes", "is \(downloadBytes) but the files add up to \(total)") }
        return problems
    }
}
