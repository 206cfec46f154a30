/// An entity tag (RFC 9110 §8.8.3): an opaque validator, strong or weak.
///
/// Parsing decisions:
/// - `W/` is case-sensitive (`%s"W/"` in the ABNF): `w/"x"` is malformed.
/// - Leading and trailing SP / HTAB around the tag are ignored; nothing else may surround it.
/// - Inside the quotes only `etagc` is allowed: `%x21 / %x23-7E / obs-text`, i.e. no DQUOTE,
///   no space and no control character. A comma is allowed (it is part of `etagc`).
public struct EntityTag: Hashable, Sendable {
    /// The tag between the quotes, without them.
    public var opaqueTag: String
    /// True for a weak validator (`W/"..."`).
    public var isWeak: Bool

    /// A tag from its parts. `opaqueTag` must consist of `etagc` characters (see the type's doc);
    /// it is not checked here.
    public init(opaqueTag: String, isWeak: Bool = false) {
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// Parses `"xyz"` or `W/"xyz"`; nil if malformed.
    public init?(parsing value: some StringProtocol) {
        let parsed: EntityTag? = ASCIIBytes.withBytes(of: value) { bytes in
            let range = ASCIIBytes.trimmingWhitespace(bytes)
            guard let tag = EntityTag.scan(bytes, from: range.lowerBound, to: range.upperBound),
                  tag.end == range.upperBound
            else { return nil }
            return EntityTag(
                opaqueTag: String(decoding: UnsafeBufferPointer(rebasing: bytes[tag.opaque]), as: UTF8.self),
                isWeak: tag.isWeak)
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The field value form: `"xyz"` or `W/"xyz"`.
    public var headerValue: String {
        isWeak ? "W/\"\(opaqueTag)\"" : "\"\(opaqueTag)\""
    }

    /// RFC 9110 §8.8.3.2: strong comparison — both tags are strong and their opaque tags are equal.
    public func matchesStrongly(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// RFC 9110 §8.8.3.2: weak comparison — the opaque tags are equal, whether weak or not.
    public func matchesWeakly(_ other: EntityTag) -> Bool {
        opaqueTag == other.opaqueTag
    }

    // MARK: - Lists (If-Match, If-None-Match)

    /// The outcome of comparing an `If-Match` / `If-None-Match` field against the current tag.
    package enum ListMatch: Equatable {
        /// No occurrence, or only empty list elements: the field counts as absent.
        case absent
        /// Not `"*"` and not `1#entity-tag`; also `"*"` mixed with tags.
        case malformed
        /// `"*"`, or a listed tag matches by the requested comparison.
        case matched
        /// A well-formed list in which no tag matches.
        case unmatched
    }

    /// Compares the list `"*" / #entity-tag` spread over all `fieldValues` (one per field line,
    /// combined as if joined by commas) with `current`.
    ///
    /// `"*"` matches any current representation; the caller only evaluates preconditions for an
    /// existing resource, so `"*"` matches even when `current` is nil (the resource has no tag).
    /// The whole list is checked, so a malformed element anywhere makes the field malformed.
    package static func compare(list fieldValues: [String], with current: EntityTag?, strongly: Bool) -> ListMatch {
        var elements = 0
        var sawStar = false
        var matched = false
        for value in fieldValues {
            let ok: Bool = ASCIIBytes.withBytes(of: value) { bytes in
                var i = 0
                let end = bytes.count
                while true {
                    // RFC 9110 §5.6.1.2: empty list elements and OWS around commas are accepted.
                    while i < end, ASCIIBytes.isWhitespace(bytes[i]) || bytes[i] == ASCIIBytes.comma { i += 1 }
                    if i == end { return true }
                    elements += 1
                    if bytes[i] == UInt8(ascii: "*") {
                        sawStar = true
                        i += 1
                    } else {
                        guard let tag = scan(bytes, from: i, to: end) else { return false }
                        if let current, !matched, strongly ? (!tag.isWeak && !current.isWeak) : true,
                           current.opaqueTag.utf8.elementsEqual(UnsafeBufferPointer(rebasing: bytes[tag.opaque])) {
                            matched = true
                        }
                        i = tag.end
                    }
                    while i < end, ASCIIBytes.isWhitespace(bytes[i]) { i += 1 }
                    guard i == end || bytes[i] == ASCIIBytes.comma else { return false }
                }
            }
            if !ok { return .malformed }
        }
        if elements == 0 { return .absent }
        if sawStar { return elements == 1 ? .matched : .malformed }
        return matched ? .matched : .unmatched
    }

    /// Scans one entity-tag starting at `start`: the opaque bytes' range, weakness and the index after it.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> (opaque: Range<Int>, isWeak: Bool, end: Int)? {
        var i = start
        var isWeak = false
        if end - i >= 2, bytes[i] == UInt8(ascii: "W"), bytes[i + 1] == UInt8(ascii: "/") {
            isWeak = true
            i += 2
        }
        guard i < end, bytes[i] == ASCIIBytes.quote else { return nil }
        i += 1
        let opaqueStart = i
        // RFC 9110 §8.8.3: etagc = %x21 / %x23-7E / obs-text.
        while i < end, bytes[i] != ASCIIBytes.quote {
            let b = bytes[i]
            guard b == 0x21 || (b >= 0x23 && b != 0x7F) else { return nil }
            i += 1
        }
        guard i < end else { return nil }
        return (opaqueStart..<i, isWeak, i + 1)
    }
}
