import Foundation

/// `content/<pack>/<version>/manifest.json` (spec §2.2, §4.4): every file of a pack version with its size,
/// SHA-256, strong ETag and chunk hashes. Written at publish time; the server trusts it.
public struct PackManifest: Sendable, Equatable, Codable {
    public struct Chunk: Sendable, Equatable, Codable {
        public var offset: Int64
        public var length: Int64
        public var sha256: String

        public init(offset: Int64, length: Int64, sha256: String) {
            self.offset = offset
            self.length = length
            self.sha256 = sha256
        }
    }

    public struct File: Sendable, Equatable, Codable {
        /// Relative path inside the version directory, `/`-separated.
        public var path: String
        public var size: Int64
        public var sha256: String
        /// Strong, content-derived entity tag, quotes included.
        public var etag: String
        public var url: String
        public var chunks: [Chunk]

        public init(path: String, size: Int64, sha256: String, etag: String, url: String, chunks: [Chunk]) {
            self.path = path
            self.size = size
            self.sha256 = sha256
            self.etag = etag
            self.url = url
            self.chunks = chunks
        }
    }

    public var pack: String
    public var version: Int
    public var productId: String?
    public var downloadBytes: Int64
    public var chunkSize: Int64
    /// When the version was published (RFC 3339); the files' `Last-Modified`.
    public var published: String
    public var files: [File]

    public init(pack: String, version: Int, productId: String?, chunkSize: Int64, published: String, files: [File]) {
        self.pack = pack
        self.version = version
        self.productId = productId
        self.chunkSize = chunkSize
        self.published = published
        self.files = files
        self.downloadBytes = files.reduce(0) { $0 + $1.size }
    }

    /// The default chunk size: 1 MiB.
    public static let defaultChunkSize: Int64 = 1 << 20

    /// The entity tag for a file with this SHA-256 (hex).
    public static func entityTag(forSHA256 hex: String) -> String { "\"\(hex)\"" }

    /// The download URL of a file: each path segment percent-encoded.
    public static func url(pack: String, version: Int, path: String) -> String {
        let encoded = path.split(separator: "/", omittingEmptySubsequences: false).map { PathEncoding.encodeSegment(String($0)) }
        return "/v1/packs/\(pack)/\(version)/files/" + encoded.joined(separator: "/")
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

    public func file(path: String) -> File? { files.first { $0.path == path } }

    /// Publish time in seconds since 1970.
    public var publishedSeconds: Int64 { Timestamp.parseRFC3339(published) ?? 0 }

    // MARK: - JSON

    /// The manifest as served and stored: stable key order, one file per line.
    public func encoded() -> [UInt8] {
        var out = "{\"pack\": \(JSONText.string(pack)), \"version\": \(version), \"productId\": \(JSONText.optionalString(productId)),\n"
        out += " \"downloadBytes\": \(downloadBytes), \"chunkSize\": \(chunkSize), \"published\": \(JSONText.string(published)),\n"
        out += " \"files\": ["
        for (i, file) in files.enumerated() {
            out += i == 0 ? "\n  " : ",\n  "
            out += "{\"path\": \(JSONText.string(file.path)), \"size\": \(file.size), \"sha256\": \(JSONText.string(file.sha256)), "
            out += "\"etag\": \(JSONText.string(file.etag)), \"url\": \(JSONText.string(file.url)),\n   \"chunks\": ["
            for (j, chunk) in file.chunks.enumerated() {
                if j > 0 { out += ", " }
                out += "{\"offset\": \(chunk.offset), \"length\": \(chunk.length), \"sha256\": \"\(chunk.sha256)\"}"
            }
            out += "]}"
        }
        out += "]}\n"
        return Array(out.utf8)
    }

    /// Reads a manifest; `file` names it in the error.
    public static func decode(_ data: [UInt8], file: String) throws(CatalogProblems) -> PackManifest {
        do {
            return try JSONDecoder().decode(PackManifest.self, from: Data(data))
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
        if Timestamp.parseRFC3339(published) == nil { problem("published", "is not an RFC 3339 UTC time") }
        var total: Int64 = 0
        var seen = Set<String>()
        for (i, f) in files.enumerated() {
            let at = "files[\(i)]"
            if !PathEncoding.isSafeRelativePath(f.path) { problem("\(at).path", "\"\(f.path)\" is not a safe relative path") }
            if f.path == "manifest.json" { problem("\(at).path", "the manifest cannot list itself") }
            if !seen.insert(f.path).inserted { problem("\(at).path", "\"\(f.path)\" is listed twice") }
            if f.size < 0 { problem("\(at).size", "must not be negative") }
            if f.etag != Self.entityTag(forSHA256: f.sha256) { problem("\(at).etag", "does not match the file's SHA-256") }
            if f.url != Self.url(pack: pack, version: version, path: f.path) { problem("\(at).url", "does not match the path") }
            let expected = chunkSize > 0 ? Self.chunkRanges(size: f.size, chunkSize: chunkSize) : []
            if expected.count != f.chunks.count || zip(expected, f.chunks).contains(where: { $0.offset != $1.offset || $0.length != $1.length }) {
                problem("\(at).chunks", "do not tile the file in chunks of \(chunkSize) bytes")
            }
            total += f.size
        }
        if total != downloadBytes { problem("downloadBytes", "is \(downloadBytes) but the files add up to \(total)") }
        return problems
    }
}
