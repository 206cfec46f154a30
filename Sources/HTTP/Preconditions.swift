/// The conditional headers of a request (RFC 9110 §13.1) and their evaluation (§13.2.2).
///
/// Evaluate only when the response without conditions would be 2xx (a missing resource answers
/// `404` and its preconditions are ignored).
///
/// Decisions the RFC leaves open:
/// - A field whose occurrences hold only whitespace / empty list elements counts as absent.
/// - `If-Match` that is malformed (not `"*"` nor a list of entity tags, or `"*"` mixed with tags)
///   is present and false: `412`. Failing closed protects the state change it guards.
/// - `If-None-Match` that is malformed is present and does not match: the request proceeds, and
///   `If-Modified-Since` is still ignored because `If-None-Match` is present.
/// - `If-Modified-Since` / `If-Unmodified-Since` are ignored when their value is not one valid
///   HTTP-date, when the field appears more than once (RFC 9110 §13.1.3/§13.1.4: "including when
///   the field value appears to be a list of dates"), or when the resource has no `Last-Modified`.
///   A date in the future is not treated specially.
/// - `If-Range` that is malformed or appears more than once is false: the full `200` is sent.
public struct Preconditions: Sendable {
    // Raw field values, one entry per occurrence of the header line (lists not yet split).

    /// `If-Match` field values.
    public var ifMatch: [String]
    /// `If-None-Match` field values.
    public var ifNoneMatch: [String]
    /// `If-Modified-Since` field values.
    public var ifModifiedSince: [String]
    /// `If-Unmodified-Since` field values.
    public var ifUnmodifiedSince: [String]
    /// `If-Range` field values.
    public var ifRange: [String]

    public init(
        ifMatch: [String] = [], ifNoneMatch: [String] = [], ifModifiedSince: [String] = [],
        ifUnmodifiedSince: [String] = [], ifRange: [String] = []
    ) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
        self.ifRange = ifRange
    }

    /// The result of steps 1–4.
    public enum Outcome: Equatable, Sendable {
        /// Send the normal response (then consider step 5 for a Range).
        case proceed
        /// `304 Not Modified`.
        case notModified
        /// `412 Precondition Failed`.
        case preconditionFailed
    }

    /// RFC 9110 §13.2.2 steps 1–4 in order. `isGetOrHead` selects 304 vs 412 for If-None-Match
    /// and enables If-Modified-Since.
    /// `lastModified` in seconds since 1970 (nil if the resource has none), `etag` nil if none.
    public func evaluate(isGetOrHead: Bool, etag: EntityTag?, lastModified: Int64?) -> Outcome {
        // RFC 9110 §13.2.2 step 1: If-Match, strong comparison (§13.1.1).
        let ifMatchResult = EntityTag.compare(list: ifMatch, with: etag, strongly: true)
        if ifMatchResult != .absent {
            if ifMatchResult != .matched { return .preconditionFailed }
        } else if let date = Self.singleDate(ifUnmodifiedSince), let lastModified, lastModified > date {
            // RFC 9110 §13.2.2 step 2: If-Unmodified-Since, only without If-Match (§13.1.4).
            return .preconditionFailed
        }

        // RFC 9110 §13.2.2 step 3: If-None-Match, weak comparison (§13.1.2).
        let ifNoneMatchResult = EntityTag.compare(list: ifNoneMatch, with: etag, strongly: false)
        if ifNoneMatchResult != .absent {
            if ifNoneMatchResult == .matched { return isGetOrHead ? .notModified : .preconditionFailed }
        } else if isGetOrHead, let date = Self.singleDate(ifModifiedSince), let lastModified, lastModified <= date {
            // RFC 9110 §13.2.2 step 4: If-Modified-Since, GET/HEAD only, without If-None-Match (§13.1.3):
            // false when the representation has not been modified since the date.
            return .notModified
        }
        return .proceed
    }

    /// Step 5: true when a Range may be honoured (no If-Range, or it matches: strong ETag comparison / exact date match).
    ///
    /// RFC 9110 §13.1.5: an entity tag must match strongly (a weak tag on either side never
    /// matches); a date must equal `lastModified` to the second. No tag or no `lastModified` on
    /// the resource makes the corresponding form false.
    public func ifRangeAllowsPartial(etag: EntityTag?, lastModified: Int64?) -> Bool {
        if ifRange.isEmpty { return true }
        guard ifRange.count == 1 else { return false }
        let value = ifRange[0]
        let looksLikeTag = ASCIIBytes.withBytes(of: value) { bytes in
            let range = ASCIIBytes.trimmingWhitespace(bytes)
            guard let first = range.first else { return false }
            return bytes[first] == ASCIIBytes.quote
                || (bytes[first] == UInt8(ascii: "W") && range.count > 1 && bytes[first + 1] == UInt8(ascii: "/"))
        }
        if looksLikeTag {
            guard let tag = EntityTag(parsing: value), let etag else { return false }
            return tag.matchesStrongly(etag)
        }
        guard let date = HTTPDate.parse(value), let lastModified else { return false }
        return date == lastModified
    }

    /// The date of a field that must be one HTTP-date; nil when absent, repeated or invalid.
    private static func singleDate(_ values: [String]) -> Int64? {
        guard values.count == 1 else { return nil }
        return HTTPDate.parse(values[0])
    }
}
