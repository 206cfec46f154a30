package import Foundation

/// The on-disk copy of a product list with its validators, one JSON file per list and server, written
/// atomically so body and validators never disagree.
///
/// Every file operation (the read of ``load(_:)``, the directory and atomic write of ``store(_:_:)``, the removal of
/// ``remove(_:)``) runs on ``work``, a ``FileWorkQueue``, and is awaited: never on one of Swift's cooperative threads,
/// which a read or write on a stalled volume would otherwise hold, and with it every task of the app that shares the
/// pool (there are as many threads as cores).
///
/// One queue per ``DepotClient`` (made in its initializer, shared by its copies), not one per fetch or per call: a
/// client's list files are then read and written one at a time, in the order its fetches hand the work in, and a
/// stalled cache volume holds one dispatch thread per client however many fetches wait on it. It is not a
/// downloader's queue either, so a stalled cache does not hold a download's writes, nor a stalled pack volume the
/// product lists.
package struct ProductListCache: Sendable {
    /// What is stored for one list.
    struct Entry: Codable, Sendable {
        var etag: String?
        var lastModified: String?
        var body: Data
    }

    /// The file operations themselves, called on ``work`` only. ``system`` in every client; a test stands in
    /// operations that block the way a stalled volume does.
    package struct Files: Sendable {
        /// The bytes of a file.
        package var read: @Sendable (URL) throws -> Data
        /// Writes a file atomically, creating its directory first.
        package var write: @Sendable (Data, URL) throws -> Void
        /// Removes a file.
        package var remove: @Sendable (URL) throws -> Void

        package init(read: @escaping @Sendable (URL) throws -> Data, write: @escaping @Sendable (Data, URL) throws -> Void,
                     remove: @escaping @Sendable (URL) throws -> Void) {
            self.read = read
            self.write = write
            self.remove = remove
        }

        /// Foundation's: `Data(contentsOf:)`, `createDirectory` and an atomic `write`, `removeItem`.
        package static let system = Files(
            read: { try Data(contentsOf: $0) },
            write: { data, file in
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: file, options: .atomic)
            },
            remove: { try FileManager.default.removeItem(at: $0) })
    }

    let directory: URL
    let files: Files
    /// Where the file work runs.
    let work: FileWorkQueue

    init(directory: URL, files: Files = .system, work: FileWorkQueue = FileWorkQueue(label: "depot.client.product-lists")) {
        self.directory = directory
        self.files = files
        self.work = work
    }

    /// The stored entry, or nil when there is none or it cannot be read or decoded.
    func load(_ key: String) async -> Entry? {
        let (files, file) = (files, file(key))
        let entry = try? await work.run { () -> Entry? in
            guard let data = try? files.read(file) else { return nil }
            return try? JSONDecoder().decode(Entry.self, from: data)
        }
        return entry ?? nil
    }

    func store(_ entry: Entry, _ key: String) async throws {
        let (files, file) = (files, file(key))
        try await work.run { try files.write(JSONEncoder().encode(entry), file) }
    }

    func remove(_ key: String) async {
        let (files, file) = (files, file(key))
        _ = try? await work.run { try files.remove(file) }
    }

    private func file(_ key: String) -> URL { directory.appendingPathComponent(key + ".cache.json") }

    /// A file-name-safe key for a list URL: the server's host and port plus the list's name, so one
    /// directory can cache several servers.
    static func key(for url: URL) -> String {
        let raw = "\(url.host ?? "local")_\(url.port.map(String.init) ?? "")_\(url.lastPathComponent)"
        return String(raw.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
    }
}
