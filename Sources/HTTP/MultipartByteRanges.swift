/// A `multipart/byteranges` body (RFC 9110 §14.6, RFC 2046 §5.1.1) for a 206 with several ranges.
///
/// Framing: every part starts with its own CRLF, `--boundary`, CRLF, the part's fields, and an
/// empty line; the body ends with CRLF `--boundary--` CRLF:
///
///     \r\n--B\r\nContent-Type: T\r\nContent-Range: bytes a-b/N\r\n\r\n<bytes a...b>
///     \r\n--B\r\n...
///     \r\n--B--\r\n
///
/// The CRLF before the first boundary is an empty preamble (RFC 2046 §5.1.1), which keeps every
/// part head the same shape (as nginx and Apache send it). `Content-Type` is left out of the parts
/// when `contentType` is empty. The body is: `parts[0].head`, the bytes of `parts[0].range`,
/// `parts[1].head`, ..., `trailer`.
public struct MultipartByteRanges: Sendable {
    /// One body part: its head bytes, followed on the wire by the bytes of `range`.
    public struct Part: Sendable {
        /// `\r\n--B\r\nContent-Type: T\r\nContent-Range: bytes a-b/N\r\n\r\n`.
        public var head: [UInt8]
        /// The representation bytes sent after `head`.
        public var range: ByteRange
    }

    /// Why a body could not be parsed by ``parse(body:boundary:)``.
    public enum ParseError: Error, Equatable, Sendable {
        /// No `--boundary` line at the start of the body or of a line.
        case missingBoundary
        /// A part's header block is not `name: value` lines ended by an empty line.
        case malformedPart
        /// A part without `Content-Range`.
        case missingContentRange
        /// The body ends before the close delimiter `--boundary--`.
        case missingCloseDelimiter
    }

    /// The boundary, without the leading dashes.
    public let boundary: String
    /// The parts, in the order of the ranges given.
    public let parts: [Part]
    /// `\r\n--B--\r\n`.
    public let trailer: [UInt8]

    /// Frames `ranges` (in this order) of a representation of `totalSize` bytes.
    /// `boundary` must be 1–70 characters of RFC 2046 `bchars` not ending in a space (see ``makeBoundary()``).
    public init(ranges: [ByteRange], totalSize: Int64, contentType: String, boundary: String) {
        precondition(!boundary.isEmpty && boundary.utf8.count <= 70, "RFC 2046 §5.1.1: a boundary has 1 to 70 characters")
        self.boundary = boundary
        let typeLine = contentType.isEmpty ? "" : "Content-Type: \(contentType)\r\n"
        self.parts = ranges.map { range in
            let head = "\r\n--\(boundary)\r\n\(typeLine)Content-Range: \(range.contentRange(completeLength: totalSize))\r\n\r\n"
            return Part(head: Array(head.utf8), range: range)
        }
        self.trailer = Array("\r\n--\(boundary)--\r\n".utf8)
    }

    /// Exact, head+body bytes of all parts + trailer.
    public var contentLength: Int64 {
        parts.reduce(Int64(trailer.count)) { $0 + Int64($1.head.count) + $1.range.length }
    }

    /// `multipart/byteranges; boundary=B`.
    public var contentTypeValue: String {
        "multipart/byteranges; boundary=\(boundary)"
    }

    /// The whole body for a representation held in memory (`representation.count` must cover every range).
    public func body(of representation: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Int(contentLength))
        for part in parts {
            out += part.head
            out += representation[Int(part.range.offset)..<Int(part.range.offset + part.range.length)]
        }
        out += trailer
        return out
    }

    /// A random boundary of 32 alphanumerics (about 190 bits), not likely to occur in data.
    public static func makeBoundary() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices {
            bytes[i] = alphabet[Int(generator.next(upperBound: UInt8(alphabet.count)))]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses a multipart/byteranges body back (for tests and clients): each part's Content-Range and bytes.
    ///
    /// Accepts a first boundary at the very start of the body or after a preamble ending in CRLF,
    /// transport padding (SP / HTAB) after a boundary, header names in any case with OWS around
    /// values, and anything (an epilogue) after the close delimiter.
    public static func parse(body: [UInt8], boundary: String) throws(ParseError) -> [(contentRange: String, contentType: String?, bytes: [UInt8])] {
        let dashBoundary = Array("--\(boundary)".utf8)
        let delimiter = [ASCIIBytes.cr, ASCIIBytes.lf] + dashBoundary
        // RFC 2046 §5.1.1: the first boundary is at the start of the body or follows a CRLF.
        var i: Int
        if body.starts(with: dashBoundary) {
            i = dashBoundary.count
        } else if let found = firstIndex(of: delimiter, in: body, from: 0) {
            i = found + delimiter.count
        } else {
            throw .missingBoundary
        }

        var result: [(contentRange: String, contentType: String?, bytes: [UInt8])] = []
        while true {
            if body.count - i >= 2, body[i] == ASCIIBytes.hyphen, body[i + 1] == ASCIIBytes.hyphen { return result }
            while i < body.count, ASCIIBytes.isWhitespace(body[i]) { i += 1 }
            guard body.count - i >= 2, body[i] == ASCIIBytes.cr, body[i + 1] == ASCIIBytes.lf else {
                throw i >= body.count ? .missingCloseDelimiter : .malformedPart
            }
            i += 2

            var contentRange: String?
            var contentType: String?
            while true {
                guard let lineEnd = firstIndex(of: [ASCIIBytes.cr, ASCIIBytes.lf], in: body, from: i) else { throw .malformedPart }
                if lineEnd == i { i += 2; break }
                let line = body[i..<lineEnd]
                guard let colon = line.firstIndex(of: ASCIIBytes.colon) else { throw .malformedPart }
                let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
                var value = line[(colon + 1)...]
                while let first = value.first, ASCIIBytes.isWhitespace(first) { value = value.dropFirst() }
                while let last = value.last, ASCIIBytes.isWhitespace(last) { value = value.dropLast() }
                if name == "content-range" { contentRange = String(decoding: value, as: UTF8.self) }
                if name == "content-type" { contentType = String(decoding: value, as: UTF8.self) }
                i = lineEnd + 2
            }
            guard let contentRange else { throw .missingContentRange }
            guard let next = firstIndex(of: delimiter, in: body, from: i) else { throw .missingCloseDelimiter }
            result.append((contentRange, contentType, Array(body[i..<next])))
            i = next + delimiter.count
        }
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, haystack.count - start >= needle.count else { return nil }
        var i = start
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
