public import DepotWire

extension PackManifest {
    /// This manifest as answered to `?from=`, against `old`, the installed version's manifest
    /// (`pack-updates.md` §2): every chunk whose bytes (same SHA-256 and length) exist somewhere in `old` gets
    /// `reuse` naming the first place they are found there, and `delta` sums the bytes to copy and to fetch.
    /// `old == nil` (not a version that still has its manifest) gives `"delta": null` and no `reuse`.
    ///
    /// Computed from the two manifests only (an index by SHA-256 and length), never from file bytes.
    public func delta(from old: PackManifest?, fromVersion: Int) -> PackManifest {
        var answer = self
        answer.plan = nil
        guard let old else {
            answer.delta = .unavailable
            return answer
        }
        var index: [ChunkKey: Chunk.Reuse] = [:]
        for file in old.files {
            for chunk in file.chunks {
                let key = ChunkKey(sha256: chunk.sha256.lowercased(), length: chunk.length)
                if index[key] == nil { index[key] = Chunk.Reuse(path: file.path, offset: chunk.offset) }
            }
        }
        var reuseBytes: Int64 = 0
        for f in answer.files.indices {
            for c in answer.files[f].chunks.indices {
                let chunk = answer.files[f].chunks[c]
                if let reuse = index[ChunkKey(sha256: chunk.sha256.lowercased(), length: chunk.length)] {
                    answer.files[f].chunks[c].reuse = reuse
                    reuseBytes += chunk.length
                }
            }
        }
        answer.delta = .summary(PackDelta.Summary(from: fromVersion, reuseBytes: reuseBytes, fetchBytes: downloadBytes - reuseBytes))
        return answer
    }

    /// `from` of `?from=`: a positive decimal integer without sign or leading zeros (nil for anything else:
    /// empty, `0`, `x`, `1.5`, `+1`, `01`). A number too large to be a version is `Int.max`, which names no
    /// version (so `"delta": null`).
    public static func parseFromVersion(_ text: String) -> Int? {
        guard let first = text.utf8.first, first != UInt8(ascii: "0"), text.utf8.count <= 1024,
              text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text) ?? Int.max
    }

    /// The chunking the manifest declares, or fixed chunking at `chunkSize` for a manifest published before
    /// the field existed.
    public var effectiveChunking: PackChunking { chunking ?? .fixed(size: chunkSize) }
}

/// What identifies a chunk's bytes across versions.
private struct ChunkKey: Hashable {
    var sha256: String
    var length: Int64
}
