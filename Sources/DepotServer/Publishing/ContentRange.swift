package import HTTP

/// `Content-Range: bytes FIRST-LAST/TOTAL` on an admin upload (RFC 9110 §14.4): this request carries bytes
/// `FIRST...LAST` of a file of `TOTAL` bytes, and the server appends them to what it already holds.
package struct ContentRange: Sendable, Equatable {
    let first: Int64
    let last: Int64
    let total: Int64

    /// Bytes `first...last` of a file of `total` bytes.
    package init(first: Int64, last: Int64, total: Int64) {
        self.first = first
        self.last = last
        self.total = total
    }

    var length: Int64 { last - first + 1 }
    /// Whether this piece ends the file.
    var completes: Bool { last + 1 == total }

    /// The range of `fields`, nil when there is no `Content-Range`; throws when it is malformed or says
    /// something impossible (`LAST` before `FIRST`, past the end, an unknown total, a length unlike the body's).
    package static func parse(_ fields: HTTPFields, declaredLength: Int64?) throws(AdminFailure) -> ContentRange? {
        let values = fields.values("content-range")
        guard !values.isEmpty else { return nil }
        let refusal = AdminFailure.badContentRange("Content-Range must be \"bytes FIRST-LAST/TOTAL\" with FIRST <= LAST < TOTAL.")
        guard values.count == 1 else { throw refusal }
        let text = Substring(values[0]).trimmingOWS()
        guard text.hasPrefix("bytes ") else { throw refusal }
        let spec = text.dropFirst(6)
        let slash = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard slash.count == 2 else { throw refusal }
        let bounds = slash[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = decimal(bounds[0]), let last = decimal(bounds[1]), let total = decimal(slash[1]),
              first <= last, last < total else { throw refusal }
        let range = ContentRange(first: first, last: last, total: total)
        guard let declaredLength, declaredLength == range.length else {
            throw .badContentRange("A piece with Content-Range needs a Content-Length equal to LAST - FIRST + 1.")
        }
        return range
    }

    /// Digits only, at most 18 (no sign, no overflow).
    private static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
