public import DepotWire

/// The disk-space-aware plan of spec §4.4, computed from a manifest and the client's query.
extension ChunkPlan {
    /// Why a plan query is refused (`400`).
    public enum Failure: Error, Equatable, Sendable {
        /// `available` is not a non-negative integer.
        case badAvailable
        /// `have` is not a non-negative integer on a chunk boundary, at most `downloadBytes`.
        case badHave
    }

    /// Space kept free on the device: max(16 MiB, floor(2 % of available)).
    public static func reserve(forAvailable available: Int64) -> Int64 {
        max(16 << 20, available / 50)
    }

    /// Plans from the raw query values. `available` must be a non-negative integer; `have` (default 0) must
    /// fall on a chunk boundary of the concatenated file list, or equal `downloadBytes`.
    public static func make(manifest: PackManifest, available availableText: String, have haveText: String?) throws(Failure) -> ChunkPlan {
        guard let available = parseCount(availableText) else { throw .badAvailable }
        var have: Int64 = 0
        if let haveText {
            guard let parsed = parseCount(haveText) else { throw .badHave }
            have = parsed
        }
        return try make(manifest: manifest, available: available, have: have)
    }

    public static func make(manifest: PackManifest, available: Int64, have: Int64) throws(Failure) -> ChunkPlan {
        guard available >= 0 else { throw .badAvailable }
        guard have >= 0, have <= manifest.downloadBytes else { throw .badHave }
        let reserve = reserve(forAvailable: available)
        let budget = max(0, available - reserve)
        // With `?from=` (chunks marked `reuse`), only the chunks to fetch are planned, but the copies need room
        // too: the new version is written beside the installed one (`pack-updates.md` §2).
        var remaining: Int64 = 0
        var copies: Int64 = 0
        var next: [Step] = []
        var position: Int64 = 0   // global offset of the current chunk
        var onBoundary = have == manifest.downloadBytes
        var used: Int64 = 0
        var full = false
        for file in manifest.files {
            for chunk in file.chunks {
                defer { position += chunk.length }
                if position < have { continue }
                if position == have { onBoundary = true }
                if chunk.reuse != nil {
                    copies += chunk.length
                    continue
                }
                remaining += chunk.length
                if full { continue }
                if used + chunk.length <= budget {
                    used += chunk.length
                    next.append(Step(path: file.path, offset: chunk.offset, length: chunk.length))
                } else {
                    full = true
                }
            }
        }
        guard onBoundary else { throw .badHave }
        return ChunkPlan(availableBytes: available, reserveBytes: reserve, remainingBytes: remaining,
                         fits: remaining + copies <= budget, next: next)
    }

    /// A decimal count without sign; counts above Int64.max are taken as Int64.max.
    static func parseCount(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 1024, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Beyond Int64 every amount plans the same way as Int64.max (no device is that large).
        return Int64(text) ?? Int64.max
    }
}
