import DepotWire
import Foundation

extension PackManifest {
    /// The largest chunk a manifest may declare.
    static let maxChunkSize: Int64 = 1 << 30

    /// Checks what the downloader relies on before anything is written: safe paths, no path both a file and
    /// a directory, chunks tiling each file exactly, hex digests, the total.
    package func validated(reserved: String) throws -> PackManifest {
        // A chunk is held in memory while it is checked: its size is bounded (the server's own limit is 1 GiB).
        guard chunkSize > 0, chunkSize <= Self.maxChunkSize else {
            throw DepotClientError.invalidResponse("chunkSize \(chunkSize) is outside 1...\(Self.maxChunkSize)")
        }
        var seen = Set<String>()
        for file in files {
            try ManifestPath.check(file.path, reserved: reserved)
            guard seen.insert(file.path).inserted else { throw DepotClientError.invalidResponse("\(file.path) listed twice") }
            var expected: Int64 = 0
            for chunk in file.chunks {
                guard chunk.offset == expected, chunk.length > 0, chunk.length <= chunkSize, ManifestPath.isSHA256Hex(chunk.sha256) else {
                    throw DepotClientError.invalidResponse("chunks of \(file.path) do not tile the file")
                }
                if let reuse = chunk.reuse {
                    // A chunk to copy is read from the installed version: the same path rules apply.
                    try ManifestPath.check(reuse.path, reserved: reserved)
                    guard reuse.offset >= 0 else { throw DepotClientError.invalidResponse("a reuse offset of \(file.path) is negative") }
                }
                expected += chunk.length  // cannot overflow: at most chunkSize per chunk, and far fewer than 2^33 chunks
            }
            guard expected == file.size, file.size >= 0 else {
                throw DepotClientError.invalidResponse("chunks of \(file.path) do not add up to its size")
            }
        }
        for path in seen {
            var parent = Substring(path)
            while let slash = parent.lastIndex(of: "/") {
                parent = parent[..<slash]
                if seen.contains(String(parent)) {
                    throw DepotClientError.invalidResponse("\(parent) is both a file and a directory")
                }
            }
        }
        var total: Int64 = 0
        for file in files {
            let (sum, overflow) = total.addingReportingOverflow(file.size)
            guard !overflow else { throw DepotClientError.invalidResponse("the file sizes add up to more than 2^63 bytes") }
            total = sum
        }
        guard downloadBytes == total else {
            throw DepotClientError.invalidResponse("downloadBytes is not the sum of the file sizes")
        }
        return self
    }
}

extension PackManifest.Chunk {
    /// The last byte's offset.
    var lastByte: Int64 { offset + length - 1 }
}

/// The rules a manifest path must follow before it is joined to the destination.
package enum ManifestPath {
    /// Refuses anything that could leave the destination or clash with the journal: empty, absolute,
    /// backslash, NUL, empty/`.`/`..` segments, the reserved journal name and names beginning with it and a dot
    /// (the journal's temporary file).
    package static func check(_ path: String, reserved: String) throws {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let bad = path.isEmpty || path.hasPrefix("/") || path.contains("\\") || path.contains("\0")
            || segments.contains { $0.isEmpty || $0 == "." || $0 == ".." }
            || path == reserved || path.hasPrefix(reserved + ".")
        if bad { throw DepotClientError.unsafePath(path) }
    }

    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }
    }
}
