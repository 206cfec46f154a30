/// A satisfiable byte range of a representation: `length` bytes starting at `offset`.
public struct ByteRange: Hashable, Sendable {
    /// The first byte's offset (`first-pos`).
    public var offset: Int64
    /// The number of bytes, at least 1 for a range produced by ``ByteRangeSet/decide(_:size:)``.
    public var length: Int64

    public init(offset: Int64, length: Int64) {
        self.offset = offset
        self.length = length
    }

    /// The offset of the last byte (`last-pos`).
    public var lastOffset: Int64 { offset + length - 1 }

    /// RFC 9110 §14.4: the `Content-Range` value of this range, e.g. `bytes 0-8/1000`.
    public func contentRange(completeLength: Int64) -> String {
        "bytes \(offset)-\(lastOffset)/\(completeLength)"
    }
}

/// What to do with a `Range` request (RFC 9110 §14.2).
public enum RangeDecision: Equatable, Sendable {
    /// Ignore Range: send the whole representation as 200.
    case full
    /// 1 element → single 206; ≥2 → multipart/byteranges 206 (request order).
    case partial([ByteRange])
    /// 416 with `Content-Range: bytes */N` (see ``ByteRangeSet/unsatisfiedContentRange(completeLength:)``).
    case unsatisfiable
}

/// Evaluation of the `Range` header field (RFC 9110 §14.1–14.2) against a representation.
public enum ByteRangeSet {
    /// More ranges than this in one request and the Range header is ignored (RFC 9110 §17.15).
    public static let maximumRangeCount = 16

    /// Evaluates a Range header (all occurrences given; more than one occurrence → .full) against a representation of `size` bytes.
    ///
    /// Rules (http-decisions.md "Ranges", in the order they apply):
    /// - No occurrence, or more than one → `.full`. An empty representation (`size <= 0`) → `.full`.
    /// - The value is `unit "=" range-set`. Without `=`, or with a unit other than `bytes`
    ///   (compared case-insensitively, no whitespace allowed around it, e.g. `items=0-5`) → `.full`.
    /// - OWS and empty elements around commas are skipped. No member at all (`bytes=`, `bytes= ,`) → `.full`.
    /// - Members are read in order; on reaching the 17th member the header is ignored (`.full`)
    ///   without reading further, so work and memory stay bounded whatever the client sends.
    /// - A member that is not `first-pos "-" [last-pos]` or `"-" suffix-length` (no whitespace
    ///   inside; `abc`, `7-1`, `--6`, `10`, `1-2 3-4`) makes the whole header invalid → `.unsatisfiable`.
    /// - Numbers too large for `Int64` saturate (a huge first-pos is past the end; a huge last-pos or
    ///   suffix-length is clamped).
    /// - `first-last`: last-pos is clamped to `size - 1`; first-pos ≥ `size` is unsatisfiable.
    ///   `-N`: the last N bytes, the whole representation when N ≥ `size`; `-0` is unsatisfiable.
    /// - Unsatisfiable members are dropped when at least one is satisfiable; none satisfiable →
    ///   `.unsatisfiable`.
    /// - Abuse guards (RFC 9110 §17.15): overlapping satisfiable ranges, or satisfiable lengths adding
    ///   up to more than `size` → `.full`. Adjacent ranges (`0-4,5-9`) and ranges out of order are allowed.
    public static func decide(_ rangeFieldValues: [String], size: Int64) -> RangeDecision {
        guard rangeFieldValues.count == 1, size > 0 else { return .full }
        return ASCIIBytes.withBytes(of: rangeFieldValues[0]) { bytes in
            decide(bytes, size: size)
        }
    }

    /// RFC 9110 §14.4: the `Content-Range` of a 416 response, `bytes */N`.
    public static func unsatisfiedContentRange(completeLength: Int64) -> String {
        "bytes */\(completeLength)"
    }

    private static func decide(_ bytes: UnsafeBufferPointer<UInt8>, size: Int64) -> RangeDecision {
        let trimmed = ASCIIBytes.trimmingWhitespace(bytes)
        var i = trimmed.lowerBound
        let end = trimmed.upperBound
        while i < end, bytes[i] != UInt8(ascii: "=") { i += 1 }
        // RFC 9110 §14.2: a server MUST ignore a Range header field with a range unit it does not understand.
        guard i < end, ASCIIBytes.equalsCaseInsensitive(bytes, trimmed.lowerBound..<i, "bytes") else { return .full }
        i += 1

        var ranges: [ByteRange] = []
        ranges.reserveCapacity(maximumRangeCount)
        var members = 0
        while true {
            while i < end, ASCIIBytes.isWhitespace(bytes[i]) || bytes[i] == ASCIIBytes.comma { i += 1 }
            if i == end { break }
            members += 1
            if members > maximumRangeCount { return .full }

            let range: ByteRange?
            if bytes[i] == ASCIIBytes.hyphen {
                // RFC 9110 §14.1.1: suffix-range = "-" suffix-length.
                i += 1
                guard let suffixLength = number(bytes, &i, end) else { return .unsatisfiable }
                // RFC 9110 §14.1.1: a suffix-length of 0 is unsatisfiable; a longer one than the
                // representation selects all of it.
                range = suffixLength == 0 ? nil : ByteRange(offset: size - min(suffixLength, size), length: min(suffixLength, size))
            } else {
                // RFC 9110 §14.1.1: int-range = first-pos "-" [ last-pos ].
                guard let first = number(bytes, &i, end), i < end, bytes[i] == ASCIIBytes.hyphen else { return .unsatisfiable }
                i += 1
                var last = Int64.max
                if i < end, ASCIIBytes.isDigit(bytes[i]) {
                    last = number(bytes, &i, end)!
                    // RFC 9110 §14.1.1: an int-range is invalid if last-pos is less than first-pos.
                    guard last >= first else { return .unsatisfiable }
                }
                // RFC 9110 §14.1.1: satisfiable when first-pos is less than the length; last-pos is clamped.
                range = first < size ? ByteRange(offset: first, length: min(last, size - 1) - first + 1) : nil
            }
            while i < end, ASCIIBytes.isWhitespace(bytes[i]) { i += 1 }
            guard i == end || bytes[i] == ASCIIBytes.comma else { return .unsatisfiable }
            if let range { ranges.append(range) }
        }

        if members == 0 { return .full }
        if ranges.isEmpty { return .unsatisfiable }
        if ranges.count == 1 { return .partial(ranges) }
        // RFC 9110 §17.15: ignore overlapping ranges or ranges that add up to more than the representation.
        // (Disjoint ranges inside the representation cannot add up to more than it: the length check
        // is a cheap second line behind the overlap check, which is O(n²) with n ≤ 16.)
        var total: Int64 = 0
        for (index, range) in ranges.enumerated() {
            total += range.length
            if total > size { return .full }
            for other in ranges[..<index] where range.offset <= other.lastOffset && other.offset <= range.lastOffset {
                return .full
            }
        }
        return .partial(ranges)
    }

    /// One or more decimal digits, saturating at `Int64.max`; nil when there is no digit.
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ end: Int) -> Int64? {
        let start = i
        var value: Int64 = 0
        while i < end, ASCIIBytes.isDigit(bytes[i]) {
            let digit = Int64(bytes[i] &- 0x30)
            value = value > (Int64.max - digit) / 10 ? Int64.max : value * 10 + digit
            i += 1
        }
        return i > start ? value : nil
    }
}
