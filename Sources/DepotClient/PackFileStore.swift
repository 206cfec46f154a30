package import Foundation

/// The destination directory of a download: files written in place at chunk offsets, the journal beside
/// them. Paths handed in have passed ``ManifestPath/check(_:reserved:)``.
package struct PackFileStore: Sendable {
    let root: URL
    let journalName: String

    /// The store of the directory `root`, whose journal is the file `journalName` in it.
    package init(root: URL, journalName: String) {
        self.root = root
        self.journalName = journalName
    }

    func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// Writes `data` at `offset` of `path` (seek + write, pwrite-style), creating the file and its
    /// directories as needed. Bytes around it are left as they are.
    func write(_ data: Data, to path: String, at offset: Int64) throws {
        let handle = try openForWriting(path)
        defer { try? handle.close() }
        try write(data, into: handle, at: offset, path: path)
    }

    /// `path` open for writing at offsets, created (with its directories) when missing: for several writes
    /// with one open.
    func openForWriting(_ path: String) throws -> FileHandle {
        var handle: FileHandle?
        try fileSystem(path) {
            let file = url(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.createIfMissing(file)
            handle = try FileHandle(forWritingTo: file)
        }
        return handle!
    }

    /// Writes `data` at `offset` of `path`, open as `handle` (from ``openForWriting(_:)``).
    func write(_ data: Data, into handle: FileHandle, at offset: Int64, path: String) throws {
        try fileSystem(path) {
            try handle.seek(toOffset: UInt64(offset))
            try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                var start = 0
                while start < bytes.count {
                    let end = min(start + Self.writeSlice, bytes.count)
                    try handle.write(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                    start = end
                }
            }
        }
    }

    /// Creates `file` empty unless it exists, with `open(O_CREAT)` in place. Not `FileManager.createFile`: that
    /// writes a temporary `.dat.nosync…` beside the file and renames it, and a process killed in between leaves
    /// the temporary among the pack's files, where no later run knows its name.
    static func createIfMissing(_ file: URL) throws {
        guard !FileManager.default.fileExists(atPath: file.path) else { return }
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        close(descriptor)
    }

    /// A chunk goes to the file in slices of this size. One 1 MiB write makes Linux (6.x, ext4 with large
    /// folios) allocate high-order page-cache folios, and on a VM with free-page reporting those come from
    /// memory the host has taken back: the copy then runs 2–3× slower than the same bytes written in
    /// 128 KiB pieces (measured with `dd bs=1M` against `bs=128k`, 2.5 s after freeing 256 MiB).
    static let writeSlice = 128 * 1024

    /// `length` bytes at `offset`, or nil when the file is missing or shorter.
    func read(_ path: String, at offset: Int64, length: Int64) -> Data? {
        guard let handle = openForReading(path) else { return nil }
        defer { try? handle.close() }
        return read(from: handle, at: offset, length: length)
    }

    /// `path` open for reading, or nil when it cannot be opened: for several reads with one open.
    func openForReading(_ path: String) -> FileHandle? {
        try? FileHandle(forReadingFrom: url(path))
    }

    /// `length` bytes at `offset` of an open file, or nil when it is shorter.
    func read(from handle: FileHandle, at offset: Int64, length: Int64) -> Data? {
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil,
              let data = try? handle.read(upToCount: Int(length)), data.count == Int(length) else { return nil }
        return data
    }

    /// Makes `path` exactly `size` bytes long (creating it empty when missing): cuts stale bytes a
    /// previous, longer version left behind.
    func setSize(_ path: String, _ size: Int64) throws {
        try fileSystem(path) {
            let file = url(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.createIfMissing(file)
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            try handle.truncate(atOffset: UInt64(size))
        }
    }

    /// Deletes `path` and then its parent directories as long as they are empty (never `root` itself).
    func remove(_ path: String) {
        let manager = FileManager.default
        try? manager.removeItem(at: url(path))
        var segments = path.split(separator: "/").dropLast()
        while !segments.isEmpty {
            let directory = root.appendingPathComponent(segments.joined(separator: "/"))
            guard let contents = try? manager.contentsOfDirectory(atPath: directory.path), contents.isEmpty else { break }
            try? manager.removeItem(at: directory)
            segments = segments.dropLast()
        }
    }

    // MARK: Journal

    var journalURL: URL { root.appendingPathComponent(journalName) }

    /// The saved journal; nil when there is none or it does not decode.
    package func loadJournal() -> DownloadJournal? {
        guard let data = try? Data(contentsOf: journalURL) else { return nil }
        return try? JSONDecoder().decode(DownloadJournal.self, from: data)
    }

    /// The journal's temporary file, a reserved name of our own (Foundation's `.atomic` writes pick a random
    /// one, which a killed process leaves behind among the pack's files).
    var journalTemporaryURL: URL { root.appendingPathComponent(journalName + ".tmp") }

    /// Temp file + rename: a crash leaves the old journal or the new one, never half of one.
    func saveJournal(_ journal: DownloadJournal) throws {
        try writeAtomically(journal, name: journalName)
    }

    /// Removes the journal and the installed version's manifest (and their temporaries).
    func removeJournal() {
        for url in [journalURL, journalTemporaryURL, installedManifestURL, root.appendingPathComponent(installedManifestName + ".tmp")] {
            try? FileManager.default.removeItem(at: url)
        }
    }

    // MARK: Installed manifest

    /// The file name of ``InstalledManifest``: the journal's name and `.manifest` (reserved by ``ManifestPath``).
    var installedManifestName: String { journalName + ".manifest" }
    var installedManifestURL: URL { root.appendingPathComponent(installedManifestName) }

    /// The saved manifest of the installed version; nil when there is none or it does not decode.
    package func loadInstalledManifest() -> InstalledManifest? {
        guard let data = try? Data(contentsOf: installedManifestURL) else { return nil }
        return try? JSONDecoder().decode(InstalledManifest.self, from: data)
    }

    /// Saves it like the journal: its own temporary (`….manifest.tmp`), renamed over it.
    func saveInstalledManifest(_ manifest: InstalledManifest) throws {
        try writeAtomically(manifest, name: installedManifestName)
    }

    /// `value` as JSON into `<root>/<name>.tmp`, then renamed to `<root>/<name>`.
    private func writeAtomically(_ value: some Encodable, name: String) throws {
        let temporary = root.appendingPathComponent(name + ".tmp")
        let target = root.appendingPathComponent(name)
        try fileSystem(name) {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(value).write(to: temporary)
            guard rename(temporary.path, target.path) == 0 else {
                throw DepotClientError.fileSystem(path: target.path, underlying: POSIXError(.init(rawValue: errno) ?? .EIO))
            }
        }
    }

    private func fileSystem(_ path: String, _ body: () throws -> Void) throws {
        do { try body() } catch let error as DepotClientError { throw error } catch {
            throw DepotClientError.fileSystem(path: url(path).path, underlying: error)
        }
    }
}
