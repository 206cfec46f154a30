#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Header fields the parser locates while it checks a head: the ones framing depends on, and the few that
/// fast paths (precomputed answers) look at. They are found by name once, so reading them later costs no
/// search and no `String`.
public enum IndexedField: Int, CaseIterable, Sendable {
    case host, contentLength, transferEncoding, connection, expect, acceptEncoding
    case ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince, ifRange, range

    /// Recognizes a field name (any letter case).
    static func recognize(_ name: UnsafeBufferPointer<UInt8>) -> IndexedField? {
        let whole = 0..<name.count
        switch name.count {
        case 4: return ASCIIBytes.equalsCaseInsensitive(name, whole, "host") ? .host : nil
        case 5: return ASCIIBytes.equalsCaseInsensitive(name, whole, "range") ? .range : nil
        case 6: return ASCIIBytes.equalsCaseInsensitive(name, whole, "expect") ? .expect : nil
        case 8:
            if ASCIIBytes.equalsCaseInsensitive(name, whole, "if-match") { return .ifMatch }
            return ASCIIBytes.equalsCaseInsensitive(name, whole, "if-range") ? .ifRange : nil
        case 10: return ASCIIBytes.equalsCaseInsensitive(name, whole, "connection") ? .connection : nil
        case 13: return ASCIIBytes.equalsCaseInsensitive(name, whole, "if-none-match") ? .ifNoneMatch : nil
        case 14: return ASCIIBytes.equalsCaseInsensitive(name, whole, "content-length") ? .contentLength : nil
        case 15: return ASCIIBytes.equalsCaseInsensitive(name, whole, "accept-encoding") ? .acceptEncoding : nil
        case 17:
            if ASCIIBytes.equalsCaseInsensitive(name, whole, "transfer-encoding") { return .transferEncoding }
            return ASCIIBytes.equalsCaseInsensitive(name, whole, "if-modified-since") ? .ifModifiedSince : nil
        case 19: return ASCIIBytes.equalsCaseInsensitive(name, whole, "if-unmodified-since") ? .ifUnmodifiedSince : nil
        default: return nil
        }
    }
}

/// Where one indexed field was found: its first value (without surrounding whitespace) and how often it occurs.
struct FieldSlot: Sendable {
    var start: Int32 = 0
    var end: Int32 = 0
    var count: UInt16 = 0
}

/// A checked request head as offsets into the bytes it was parsed from: the request line, the field section,
/// the indexed fields and the framing facts. Making it costs no allocation; `RawRequestHead` reads it together
/// with those bytes, and `RequestHead(_:)` turns it into `String`s when an application needs them.
public struct RequestHeadIndex: Sendable {
    /// Bytes of the head, from the first byte of the buffer (leading empty lines included) to after its empty line.
    public internal(set) var consumed = 0
    public internal(set) var method = HTTPMethod.get
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public internal(set) var minorVersion = 1
    /// How the body is delimited (RFC 9112 §6.3).
    public internal(set) var framing = BodyFraming.none
    /// Whether the connection may stay open after this exchange.
    public internal(set) var keepAlive = true
    /// `Expect: 100-continue` was sent (and counts: HTTP/1.1).
    public internal(set) var expectsContinue = false
    /// Number of field lines.
    public internal(set) var fieldCount = 0

    /// The origin-form target (an absolute-form's scheme and authority skipped).
    var targetStart = 0
    var targetEnd = 0
    /// The absolute-form had no path: the target is "/" followed by `targetStart..<targetEnd` (empty or a query).
    var targetNeedsSlash = false
    /// The field lines, from after the request line's LF to the empty line.
    var fieldsStart = 0
    var fieldsEnd = 0
    var slots = InlineArray<12, FieldSlot>(repeating: FieldSlot())

    init() {}

    /// How many field lines carry `field`.
    public func occurrences(of field: IndexedField) -> Int { Int(slots[field.rawValue].count) }

    mutating func record(_ field: IndexedField, value: Range<Int>) {
        let index = field.rawValue
        if slots[index].count == 0 {
            slots[index].start = Int32(value.lowerBound)
            slots[index].end = Int32(value.upperBound)
        }
        slots[index].count &+= 1
    }

    /// The first value of `field` as a range of the parsed bytes, or nil when absent.
    func firstValue(of field: IndexedField) -> Range<Int>? {
        let slot = slots[field.rawValue]
        return slot.count == 0 ? nil : Int(slot.start)..<Int(slot.end)
    }

    /// Calls `body` with every value of `field`, in order (one walk of the field lines when it occurs more than once).
    func forEachValue(of field: IndexedField, in base: UnsafePointer<UInt8>, _ body: (Range<Int>) -> Void) {
        let slot = slots[field.rawValue]
        if slot.count == 0 { return }
        if slot.count == 1 { body(Int(slot.start)..<Int(slot.end)); return }
        Self.forEachLine(base: base, fields: fieldsStart..<fieldsEnd) { name, value in
            if IndexedField.recognize(UnsafeBufferPointer(start: base + name.lowerBound, count: name.count)) == field {
                body(value)
            }
        }
    }

    /// Walks checked field lines: `body(name, value)` with the value's surrounding whitespace removed.
    static func forEachLine(base: UnsafePointer<UInt8>, fields: Range<Int>, _ body: (Range<Int>, Range<Int>) -> Void) {
        var line = fields.lowerBound
        while line < fields.upperBound {
            let remaining = fields.upperBound - line
            let lf = memchr(base + line, 0x0A, remaining).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) }
                ?? fields.upperBound
            var contentEnd = lf
            if contentEnd > line, base[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            var colon = line
            while colon < contentEnd, base[colon] != 0x3A { colon += 1 }
            var valueStart = colon + 1
            while valueStart < contentEnd, base[valueStart] == 0x20 || base[valueStart] == 0x09 { valueStart += 1 }
            var valueEnd = contentEnd
            while valueEnd > valueStart, base[valueEnd - 1] == 0x20 || base[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            body(line..<colon, valueStart..<valueEnd)
            line = lf + 1
        }
    }
}
