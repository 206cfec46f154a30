/// An origin-form request target (RFC 9112 §3.2.1) split into path and query, with the decoding
/// rules of http-decisions.md "Paths".
///
/// The target is split at the first `?`. A `#` never reaches it: the request parser refuses a request
/// line whose target contains one (fragments are not sent to servers).
public struct RequestTarget: Sendable {
    /// Raw path (before '?'), undecoded.
    public let path: String
    /// Raw query (after '?'), undecoded; nil without '?', "" for a bare '?'.
    public let query: String?

    public init(_ target: some StringProtocol) {
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = String(target)
            query = nil
        }
    }

    /// Why a path is refused (the route answers `400`).
    public enum PathError: Error, Equatable {
        /// Bad percent-encoding, or a decoded segment containing "/", "\\", NUL, or equal to "." / "..".
        case malformed
    }

    /// Splits on "/" first, then percent-decodes each segment exactly once; leading "/" required; empty segments kept except the leading one.
    ///
    /// So `/` is `[""]`, `/a/` is `["a", ""]` and `//a` is `["", "a"]`. Decisions:
    /// - `%` must be followed by two hex digits (either case); `%2F` stays inside its segment and
    ///   then makes it malformed, so an encoded slash can never create a new segment.
    /// - A decoded segment containing `/`, `\`, NUL, or equal to `.` or `..`, is malformed, whether
    ///   it was written raw or percent-encoded (`%2e%2e`). `..` inside a longer name (`a..b`) is fine.
    /// - Decoded bytes must be valid UTF-8; otherwise the path is malformed.
    /// - `+` is a literal plus in a path (it means space only in a query).
    public func pathSegments() throws(PathError) -> [String] {
        let segments: [String]? = ASCIIBytes.withBytes(of: path) { bytes in
            guard bytes.first == UInt8(ascii: "/") else { return nil }
            var segments: [String] = []
            var start = 1
            for i in 1...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "/") {
                guard let segment = Self.decodeSegment(UnsafeBufferPointer(rebasing: bytes[start..<i])) else { return nil }
                segments.append(segment)
                start = i + 1
            }
            return segments
        }
        guard let segments else { throw .malformed }
        return segments
    }

    /// Query parameters in order; "+" and "%20" both mean space.
    ///
    /// Decisions: parameters are separated by `&` only; empty parameters (`a=1&&b=2`) are skipped;
    /// a parameter without `=` has the value `""`; the name ends at the first `=`. A malformed
    /// escape (`%`, `%4`, `%zz`) is kept literally; decoded bytes that are not valid UTF-8 become
    /// U+FFFD. Names are compared exactly (case-sensitive) by ``queryValue(_:)``.
    public func queryItems() -> [(name: String, value: String)] {
        guard let query else { return [] }
        return ASCIIBytes.withBytes(of: query) { bytes in
            var items: [(name: String, value: String)] = []
            var start = 0
            for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "&") {
                defer { start = i + 1 }
                guard i > start else { continue }
                let item = UnsafeBufferPointer(rebasing: bytes[start..<i])
                if let equals = item.firstIndex(of: UInt8(ascii: "=")) {
                    items.append((Self.decodeQueryComponent(UnsafeBufferPointer(rebasing: item[..<equals])),
                                  Self.decodeQueryComponent(UnsafeBufferPointer(rebasing: item[(equals + 1)...]))))
                } else {
                    items.append((Self.decodeQueryComponent(item), ""))
                }
            }
            return items
        }
    }

    /// The value of the first parameter named `name` (after decoding), or nil.
    public func queryValue(_ name: String) -> String? {
        queryItems().first { $0.name == name }?.value
    }

    // MARK: - Decoding

    /// One path segment decoded once, or nil when malformed.
    private static func decodeSegment(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            var byte = raw[i]
            if byte == ASCIIBytes.percent {
                guard i + 2 < raw.count, let high = ASCIIBytes.hexValue(raw[i + 1]), let low = ASCIIBytes.hexValue(raw[i + 2])
                else { return nil }
                byte = high << 4 | low
                i += 2
            }
            // http-decisions.md "Paths": a decoded "/", "\" or NUL inside a segment is refused.
            guard byte != UInt8(ascii: "/"), byte != UInt8(ascii: "\\"), byte != 0 else { return nil }
            decoded.append(byte)
            i += 1
        }
        // http-decisions.md "Paths": "." and ".." segments are refused (no traversal, no aliases).
        if decoded == [UInt8(ascii: ".")] || decoded == [UInt8(ascii: "."), UInt8(ascii: ".")] { return nil }
        return String(validating: decoded, as: UTF8.self)
    }

    /// A query name or value: "+" → space, valid %XX decoded, malformed escapes kept literally.
    private static func decodeQueryComponent(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let byte = raw[i]
            if byte == UInt8(ascii: "+") {
                decoded.append(ASCIIBytes.space)
            } else if byte == ASCIIBytes.percent, i + 2 < raw.count,
                      let high = ASCIIBytes.hexValue(raw[i + 1]), let low = ASCIIBytes.hexValue(raw[i + 2]) {
                decoded.append(high << 4 | low)
                i += 2
            } else {
                decoded.append(byte)
            }
            i += 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
