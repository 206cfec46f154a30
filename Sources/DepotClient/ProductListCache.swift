import Foundation

/// The on-disk copy of a product list with its validators, one JSON file per list and server, written
/// atomically so body and validators never disagree.
struct ProductListCache: Sendable {
    /// What is stored for one list.
    struct Entry: Codable, Sendable {
        var etag: String?
        var lastModified: String?
        var body: Data
    }

    let directory: URL

    func load(_ key: String) -> Entry? {
        guard let data = try? Data(contentsOf: file(key)) else { return nil }
        return try? JSONDecoder().decode(Entry.self, from: data)
    }

    func store(_ entry: Entry, _ key: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try JSONEncoder().encode(entry).write(to: file(key), options: .atomic)
    }

    func remove(_ key: String) {
        try? FileManager.default.removeItem(at: file(key))
    }

    private func file(_ key: String) -> URL { directory.appendingPathComponent(key + ".cache.json") }

    /// A file-name-safe key for a list URL: the server's host and port plus the list's name, so one
    /// directory can cache several servers.
    static func key(for url: URL) -> String {
        let raw = "\(url.host ?? "local")_\(url.port.map(String.init) ?? "")_\(url.lastPathComponent)"
        return String(raw.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
    }
}
